output "instance_profiles" {
  description = "Instance profile name of each kind of host: web, worker, mysql, data, monitoring."
  value       = { for kind, profile in aws_iam_instance_profile.this : kind => profile.name }
}

output "role_arns" {
  description = "Role ARN of each kind of host."
  value       = { for kind, role in aws_iam_role.this : kind => role.arn }
}
