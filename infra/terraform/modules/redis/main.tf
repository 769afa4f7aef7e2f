# Redis primary/replica pairs for the follower graph and feeds (redis001a in
# the first zone, redis001b in the second), and broker001, Celery's broker.
# Each has an encrypted EBS volume at /var/lib/redis so the AOF outlives the
# instance.

locals {
  pairs = [for i in range(1, var.pair_count + 1) : format("redis%03d", i)]

  hosts = merge([
    for pair in local.pairs : {
      "${pair}a" = var.private_subnet_ids[0]
      "${pair}b" = var.private_subnet_ids[1]
    }
  ]...)

  data_volume = {
    size        = var.data_volume_size
    mount_point = "/var/lib/redis"
  }
}

module "host" {
  source   = "../host"
  for_each = local.hosts

  name               = each.key
  role               = "redis"
  bootstrap          = var.bootstrap
  subnet_id          = each.value
  security_group_ids = [var.security_group]
  instance_type      = var.instance_type
  instance_profile   = var.instance_profile
  data_volume        = local.data_volume
}

module "broker" {
  source = "../host"

  name               = "broker001"
  role               = "broker"
  bootstrap          = var.bootstrap
  subnet_id          = var.private_subnet_ids[0]
  security_group_ids = [var.security_group]
  instance_type      = var.broker_instance_type
  instance_profile   = var.instance_profile
  data_volume        = local.data_volume
}
