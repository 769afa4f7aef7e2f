output "ids" {
  description = "Security group ID of each tier: alb, web, worker, mysql, memcached, redis, zookeeper, control_db, monitoring."
  value       = { for tier, group in aws_security_group.this : tier => group.id }
}

output "fenced_id" {
  description = "ID of the fenced security group (no rule: nothing in, nothing out), for a shard host being fenced."
  value       = aws_security_group.fenced.id
}

output "fenced_arn" {
  description = "ARN of the fenced security group (the worker role may put shard hosts in it)."
  value       = aws_security_group.fenced.arn
}
