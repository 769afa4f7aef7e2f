# The monitoring host: Prometheus (infra/puppet: role::monitoring), one instance in the
# first private subnet, its samples on an encrypted EBS volume at /var/lib/prometheus.
# It finds the hosts to scrape through EC2's API (its instance role may describe
# instances: modules/iam) and reaches their metrics ports through its security group
# (modules/security); nothing reaches it.

module "host" {
  source = "../host"

  name               = "monitoring"
  role               = "monitoring"
  bootstrap          = var.bootstrap
  subnet_id          = var.private_subnet_ids[0]
  security_group_ids = [var.security_group]
  instance_type      = var.instance_type
  instance_profile   = var.instance_profile
  data_volume = {
    size        = var.data_volume_size
    mount_point = "/var/lib/prometheus"
  }
}
