variable "name" {
  description = "Name of the autoscaling group and its hosts (Name tag), prefix of the launch template's (pinboard-<environment>-web)."
  type        = string
}

variable "role" {
  description = "Role tag and Puppet role (pinboard_role fact) of the hosts: web or worker."
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
  description = "Private subnets the hosts are spread over."
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
  description = "EC2 instance type of the hosts."
  type        = string
}

variable "root_volume_size" {
  description = "GiB of each host's disk (gp3, encrypted)."
  type        = number
  default     = 20
}

variable "min_size" {
  description = "Minimum number of hosts."
  type        = number
}

variable "max_size" {
  description = "Maximum number of hosts."
  type        = number
}

variable "desired_capacity" {
  description = "Number of hosts to run now."
  type        = number
}

variable "target_group_arns" {
  description = "Load balancer target groups the hosts join (none: EC2 health checks only)."
  type        = list(string)
  default     = []
}
