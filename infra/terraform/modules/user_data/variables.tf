variable "role" {
  description = "Puppet role of the instance (pinboard_role fact): site.pp includes role::<role>."
  type        = string
}

variable "environment" {
  description = "Deployment environment (pinboard_environment fact; artifacts are read from s3://<bucket>/<environment>/)."
  type        = string
}

variable "region" {
  description = "AWS region of the artifacts bucket."
  type        = string
}

variable "artifacts_bucket" {
  description = "S3 bucket holding <environment>/puppet.tar.gz and <environment>/deploy.yaml."
  type        = string
}

variable "host_name" {
  description = "Name of a named host (pinboard_host fact, e.g. mysql001a); null for autoscaled hosts."
  type        = string
  default     = null
}

variable "pre_puppet" {
  description = "Shell script run as root before Puppet (e.g. to prepare data disks); empty for none."
  type        = string
  default     = ""
}

variable "extra_packages" {
  description = "Debian packages the pre_puppet script needs."
  type        = list(string)
  default     = []
}
