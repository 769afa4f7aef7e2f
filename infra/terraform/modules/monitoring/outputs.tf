output "host" {
  description = "{name, id, address} of the monitoring host (the instance to forward Prometheus's port from)."
  value = {
    name    = module.host.name
    id      = module.host.id
    address = module.host.address
  }
}
