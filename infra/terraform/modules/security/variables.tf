variable "name_prefix" {
  description = "Prefix of resource names (pinboard-<environment>)."
  type        = string
}

variable "vpc_id" {
  description = "ID of the VPC."
  type        = string
}
