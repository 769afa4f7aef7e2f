# One memcached pool per kind of data (users, boards, pins, lists), hosts
# named memcached-<pool>-<n> and spread over the zones.

locals {
  hosts = merge([
    for pool in var.pools : {
      for n in range(1, var.nodes_per_pool + 1) : "memcached-${pool}-${n}" => {
        pool   = pool
        subnet = var.private_subnet_ids[(n - 1) % length(var.private_subnet_ids)]
      }
    }
  ]...)
}

module "host" {
  source   = "../host"
  for_each = local.hosts

  name               = each.key
  role               = "memcached"
  bootstrap          = var.bootstrap
  subnet_id          = each.value.subnet
  security_group_ids = [var.security_group]
  instance_type      = var.instance_type
  instance_profile   = var.instance_profile
}
