output "autoscaling_group" {
  description = "Name of the worker autoscaling group."
  value       = module.hosts.autoscaling_group
}
