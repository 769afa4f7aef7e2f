# Celery workers (feed fan-out, deletions) in an autoscaling group in the
# private subnets. No load balancer: workers only take tasks from the broker.

module "hosts" {
  source = "../autoscaled"

  name               = "${var.name_prefix}-worker"
  role               = "worker"
  bootstrap          = var.bootstrap
  private_subnet_ids = var.private_subnet_ids
  security_group     = var.security_group
  instance_profile   = var.instance_profile
  instance_type      = var.instance_type
  root_volume_size   = var.volume_size
  min_size           = var.min_size
  max_size           = var.max_size
  desired_capacity   = var.desired_capacity
}
