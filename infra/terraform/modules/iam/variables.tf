variable "name_prefix" {
  description = "Prefix of resource names (pinboard-<environment>)."
  type        = string
}

variable "environment" {
  description = "Deployment environment: instances read s3://<artifacts>/<environment>/ only."
  type        = string
}

variable "ssm_prefix" {
  description = "SSM path of the environment's parameters, with leading and trailing slash (/pinboard/<env>/)."
  type        = string
}

variable "media_bucket_arn" {
  description = "ARN of the image bucket (web hosts upload to it, workers move and delete its files)."
  type        = string
}

variable "artifacts_bucket_arn" {
  description = "ARN of the release artifacts bucket (every host reads its environment's prefix)."
  type        = string
}

variable "s3_kms_key_arn" {
  description = "ARN of the KMS key encrypting both buckets."
  type        = string
}

variable "backups_bucket_arn" {
  description = "ARN of the backup bucket: shard hosts put into <environment>/ there, workers also read and list it; no role deletes."
  type        = string
}

variable "backups_kms_key_arn" {
  description = "ARN of the KMS key encrypting the backups."
  type        = string
}

variable "control_db_secret_arn" {
  description = "ARN of the control database's master user secret (web and worker hosts read it)."
  type        = string
}

variable "control_db_secret_kms_key_arn" {
  description = "ARN of the KMS key encrypting that secret."
  type        = string
}

variable "fenced_security_group_arn" {
  description = "ARN of the fenced security group: worker hosts may move this environment's shard hosts into it, and into no other group."
  type        = string
}
