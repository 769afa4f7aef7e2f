variable "name_prefix" {
  description = "Prefix of resource names (pinboard-<environment>)."
  type        = string
}

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
  description = "Private subnets of the worker hosts."
  type        = list(string)
}

variable "security_group" {
  description = "Security group of the worker hosts."
  type        = string
}

variable "instance_profile" {
  description = "IAM instance profile of the worker hosts."
  type        = string
}

variable "instance_type" {
  description = "EC2 instance type of the worker hosts."
  type        = string
}

variable "min_size" {
  description = "Minimum number of worker hosts."
  type        = number
}

variable "max_size" {
  description = "Maximum number of worker hosts."
  type        = number
}

variable "desired_capacity" {
  description = "Number of worker hosts to run now."
  type        = number
}

variable "volume_size" {
  description = "GiB of each worker host's disk: a backup's verification or a restore unpacks a whole shard host's backup into a scratch server there, under /tmp."
  type        = number
}
