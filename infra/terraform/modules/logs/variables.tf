variable "name_prefix" {
  description = "Prefix of resource names (pinboard-<environment>)."
  type        = string
}

variable "retention_days" {
  description = "Days to keep log objects."
  type        = number
}
