variable "name_prefix" {
  description = "Prefix of resource names (pinboard-<environment>)."
  type        = string
}

variable "region" {
  description = "AWS region (for the S3 gateway endpoint's service name)."
  type        = string
}

variable "zones" {
  description = "The two availability zones, in order (named explicitly so the layout never moves)."
  type        = list(string)
}

variable "vpc_cidr" {
  description = "The VPC's /16 address range."
  type        = string
}

variable "log_bucket_arn" {
  description = "ARN of the S3 bucket that receives the VPC flow logs."
  type        = string
}
