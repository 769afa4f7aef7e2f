output "autoscaling_group" {
  description = "Name of the worker autoscaling group."
  value       = aws_autoscaling_group.worker.name
}
