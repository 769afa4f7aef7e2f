output "media_bucket" {
  description = "Name of the image bucket."
  value       = aws_s3_bucket.this["media"].id
}

output "media_bucket_arn" {
  description = "ARN of the image bucket."
  value       = aws_s3_bucket.this["media"].arn
}

output "media_domain" {
  description = "CloudFront domain name serving the images."
  value       = aws_cloudfront_distribution.media.domain_name
}

output "artifacts_bucket" {
  description = "Name of the release artifacts bucket."
  value       = aws_s3_bucket.this["artifacts"].id
}

output "artifacts_bucket_arn" {
  description = "ARN of the release artifacts bucket."
  value       = aws_s3_bucket.this["artifacts"].arn
}

output "kms_key_arn" {
  description = "ARN of the KMS key encrypting both buckets."
  value       = aws_kms_key.s3.arn
}
