variable "region" {
  description = "AWS region of the state bucket."
  type        = string
}

variable "bucket_name" {
  description = "Globally unique name of the state bucket (null: pinboard-terraform-state-<account id>)."
  type        = string
  default     = null
}
