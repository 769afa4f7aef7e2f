variable "name" {
  description = "Host name: the Name tag and the pinboard_host fact (e.g. mysql001a)."
  type        = string
}

variable "role" {
  description = "Role tag (mysql_shard, memcached, redis, broker, zookeeper)."
  type        = string
}

variable "puppet_role" {
  description = "pinboard_role fact when it differs from the Role tag (null: the same)."
  type        = string
  default     = null
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

variable "subnet_id" {
  description = "Private subnet (and so availability zone) of the host."
  type        = string
}

variable "security_group_ids" {
  description = "Security groups of the host."
  type        = list(string)
}

variable "instance_type" {
  description = "EC2 instance type."
  type        = string
}

variable "instance_profile" {
  description = "Name of the IAM instance profile."
  type        = string
}

variable "root_volume_size" {
  description = "Size in GiB of the encrypted root volume."
  type        = number
  default     = 20
}

variable "data_volume" {
  description = "An encrypted EBS data volume mounted before Puppet runs ({size in GiB, mount_point}); null for none."
  type = object({
    size        = number
    mount_point = string
  })
  default = null
}

variable "pre_puppet" {
  description = "Shell script run before Puppet (after the data volume is mounted); empty for none."
  type        = string
  default     = ""
}

variable "extra_packages" {
  description = "Debian packages the pre_puppet script needs."
  type        = list(string)
  default     = []
}
