variable "name_prefix" {
  description = "Prefix of resource names (pinboard-<environment>)."
  type        = string
}

variable "log_bucket_id" {
  description = "Name of the bucket receiving S3 server access logs."
  type        = string
}

variable "retention_days" {
  description = "Days every object version is locked for (Object Lock, COMPLIANCE): nobody may delete or overwrite it sooner."
  type        = number
}

variable "administrators" {
  description = "IAM principal ARNs (wildcards allowed) that may still delete versions whose lock has ended and change the bucket's lifecycle, Object Lock configuration and policy, besides the account's root user: the role Terraform runs as."
  type        = list(string)
}
