output "bucket" {
  description = "Name of the backup bucket."
  value       = aws_s3_bucket.this.id
}

output "bucket_arn" {
  description = "ARN of the backup bucket."
  value       = aws_s3_bucket.this.arn
}

output "kms_key_arn" {
  description = "ARN of the KMS key encrypting the backups."
  value       = aws_kms_key.backups.arn
}
