output "ids" {
  description = "Security group ID of each tier: alb, web, worker, mysql, memcached, redis, zookeeper, control_db."
  value       = { for tier, group in aws_security_group.this : tier => group.id }
}
