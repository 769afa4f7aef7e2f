# The load balancer and flow logs check that they may write when they are
# created: hand the bucket out only once its policy is in place.

output "bucket_id" {
  description = "Name of the log bucket."
  value       = aws_s3_bucket.this.id
  depends_on  = [aws_s3_bucket_policy.this, aws_s3_bucket_ownership_controls.this]
}

output "bucket_arn" {
  description = "ARN of the log bucket."
  value       = aws_s3_bucket.this.arn
  depends_on  = [aws_s3_bucket_policy.this]
}

output "bucket_domain_name" {
  description = "Domain name of the log bucket, as CloudFront logging wants it."
  value       = aws_s3_bucket.this.bucket_domain_name
  depends_on  = [aws_s3_bucket_policy.this, aws_s3_bucket_ownership_controls.this]
}
