output "autoscaling_group" {
  description = "Name of the autoscaling group."
  value       = aws_autoscaling_group.this.name
}
