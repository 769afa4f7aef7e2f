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
  description = "Private subnets, one per availability zone; hosts are spread over them."
  type        = list(string)
}

variable "security_group" {
  description = "Security group of the hosts."
  type        = string
}

variable "instance_profile" {
  description = "IAM instance profile of the hosts."
  type        = string
}

variable "instance_type" {
  description = "EC2 instance type."
  type        = string
}

variable "data_volume_size" {
  description = "Size in GiB of each node's encrypted EBS volume (snapshots and transaction log)."
  type        = number
  default     = 50
}
