variable "name_prefix" {
  description = "Prefix of resource names (pinboard-<environment>)."
  type        = string
}

variable "private_subnet_ids" {
  description = "Private subnets, one per availability zone (the primary and its Multi-AZ standby)."
  type        = list(string)
}

variable "security_group" {
  description = "Security group of the database (3306 from web and worker hosts only)."
  type        = string
}

variable "instance_class" {
  description = "RDS instance class, e.g. db.t4g.small or db.m7g.large."
  type        = string
}

variable "backup_retention_days" {
  description = "Days of automated backups (point-in-time recovery) to keep."
  type        = number

  validation {
    condition     = var.backup_retention_days >= 1 && var.backup_retention_days <= 35
    error_message = "backup_retention_days must be from 1 to 35 (0 would turn backups off)."
  }
}

variable "deletion_protection" {
  description = "Refuse to delete the database (turn off only to tear an environment down)."
  type        = bool
}

variable "log_retention_days" {
  description = "Days to keep the exported audit, error and slow query logs in CloudWatch."
  type        = number
}
