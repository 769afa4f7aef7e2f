output "nodes" {
  description = "[{name, id, address, zone}] for zk1, zk2, zk3 (id is the ensemble's myid)."
  value = [
    for name, node in local.nodes : {
      name    = name
      id      = node.id
      address = module.host[name].address
      zone    = module.host[name].zone
    }
  ]
}
