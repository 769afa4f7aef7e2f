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

variable "pools" {
  description = "Pool names: one memcached pool per kind of cached data."
  type        = list(string)
  default     = ["users", "boards", "pins", "lists"]
}

variable "nodes_per_pool" {
  description = "Instances in each pool."
  type        = number
}
