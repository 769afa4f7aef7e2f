output "pools" {
  description = "Pool name => [\"address:11211\", ...], in host number order."
  value = {
    for pool in var.pools : pool => [
      for n in range(1, var.nodes_per_pool + 1) : "${module.host["memcached-${pool}-${n}"].address}:11211"
    ]
  }
}
