output "database" {
  description = "{address, port, name, secret_arn}: where the site connects; the secret holds {\"username\", \"password\"}."
  value = {
    address    = aws_db_instance.this.address
    port       = aws_db_instance.this.port
    name       = aws_db_instance.this.db_name
    secret_arn = aws_db_instance.this.master_user_secret[0].secret_arn
  }
}

output "secret_kms_key_arn" {
  description = "ARN of the KMS key that encrypts the master user secret (readers need kms:Decrypt through Secrets Manager)."
  value       = aws_kms_key.secret.arn
}
