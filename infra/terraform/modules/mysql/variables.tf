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

variable "pair_count" {
  description = "Number of masters, each with two replicas."
  type        = number
}

variable "spare_count" {
  description = "Shard hosts that serve no range, for the guard to replace a dead replica with."
  type        = number
}

variable "instance_type" {
  description = "Instance type with NVMe instance-store drives."
  type        = string
}

variable "private_subnet_ids" {
  description = "Private subnets, one per availability zone: the a members go in the first, the b members in the second."
  type        = list(string)

  validation {
    condition     = length(var.private_subnet_ids) >= 2
    error_message = "A pair needs two availability zones."
  }
}

variable "security_group" {
  description = "Security group of the shard hosts."
  type        = string
}

variable "instance_profile" {
  description = "IAM instance profile of the shard hosts."
  type        = string
}
