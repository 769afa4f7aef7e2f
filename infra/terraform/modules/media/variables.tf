variable "name_prefix" {
  description = "Prefix of resource names (pinboard-<environment>)."
  type        = string
}

variable "log_bucket_id" {
  description = "Name of the bucket receiving S3 server access logs."
  type        = string
}

variable "log_bucket_domain" {
  description = "Domain name of the log bucket (CloudFront standard logging)."
  type        = string
}

variable "noncurrent_days" {
  description = "Days to keep overwritten or deleted object versions."
  type        = number
}
