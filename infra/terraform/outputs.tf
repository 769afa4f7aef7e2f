# These names and shapes are the contract with toolkit/inventory.py, which turns
# them into the generated Hiera file and the first config documents.

output "environment" {
  description = "Deployment environment."
  value       = var.environment
}

output "region" {
  description = "AWS region."
  value       = var.region
}

output "site_url" {
  description = "The site's public URL."
  value       = module.web.site_url
}

output "alb_dns_name" {
  description = "DNS name of the application load balancer."
  value       = module.web.alb_dns_name
}

output "media_bucket" {
  description = "S3 bucket of uploaded images."
  value       = module.media.media_bucket
}

output "media_domain" {
  description = "CloudFront domain name that serves the images."
  value       = module.media.media_domain
}

output "artifacts_bucket" {
  description = "S3 bucket of release artifacts (s3://<bucket>/<env>/puppet.tar.gz, deploy.yaml)."
  value       = module.media.artifacts_bucket
}

output "backup_store" {
  description = "Where the shard hosts' backups and the masters' archived binary logs are (PINBOARD_BACKUP_STORE): s3://<bucket>/<environment>."
  value       = "s3://${module.backups.bucket}/${var.environment}"
}

output "backup_kms_key" {
  description = "ARN of the KMS key each backup object is put with (PINBOARD_BACKUP_KMS_KEY)."
  value       = module.backups.kms_key_arn
}

output "ssm_prefix" {
  description = "SSM path of the environment's SecureString parameters (secret_key, mysql_*_password)."
  value       = local.ssm_prefix
}

output "mysql_pairs" {
  description = "MySQL pairs: [{name, master = {name, address, zone}, replicas = [{name, address, zone}, ...]}]."
  value       = module.mysql.pairs
}

output "mysql_spares" {
  description = "Spare MySQL shard hosts, in the shard map with no range: [{name, address, zone}]."
  value       = module.mysql.spares
}

output "redis_pairs" {
  description = "Redis pairs: [{name, primary = {name, address, zone}, replica = {name, address, zone}}]."
  value       = module.redis.pairs
}

output "broker" {
  description = "The Redis instance that is Celery's broker: {name, address}."
  value       = module.redis.broker
}

output "memcached_pools" {
  description = "Memcached pools: pool name => [\"address:11211\", ...]."
  value       = module.memcached.pools
}

output "zookeeper" {
  description = "ZooKeeper ensemble: [{name, id, address, zone}]."
  value       = module.zookeeper.nodes
}

output "control_database" {
  description = "The control database: {address, port, name, secret_arn}; the Secrets Manager secret holds {\"username\", \"password\"}."
  value       = module.control_db.database
}

output "fenced_security_group" {
  description = "ID of the security group with no rule that the fence moves a shard host into (PINBOARD_FENCE_COMMAND on worker hosts)."
  value       = module.security.fenced_id
}
