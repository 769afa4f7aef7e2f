variable "bootstrap" {
  description = "Environment, region, AMI, artifacts bucket and EBS key shared by every instance."
  type = object({
    environment      = string
    region           = string
    ami_id           = string
    artifacts_bucket = string
    ebs_kms_key_arn  = string
  })
}

variable "private_subnet_ids" {
  description = "Private subnets; the host goes in the first."
  type        = list(string)
}

variable "security_group" {
  description = "Security group of the monitoring host."
  type        = string
}

variable "instance_profile" {
  description = "IAM instance profile of the monitoring host (EC2 discovery)."
  type        = string
}

variable "instance_type" {
  description = "EC2 instance type."
  type        = string
}

variable "data_volume_size" {
  description = "Size in GiB of the encrypted EBS volume of Prometheus's samples (Puppet's retention_size stays below it)."
  type        = number
}
