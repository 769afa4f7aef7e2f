output "state_bucket" {
  description = "Name of the state bucket: pass it as -backend-config=\"bucket=...\"."
  value       = aws_s3_bucket.state.id
}

output "kms_key_arn" {
  description = "KMS key encrypting the state (-backend-config=\"kms_key_id=...\" is optional: the bucket default applies)."
  value       = aws_kms_key.state.arn
}
