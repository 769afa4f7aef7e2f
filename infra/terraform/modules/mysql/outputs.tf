output "spares" {
  description = "[{name, address, zone}] of the spare shard hosts, in order."
  value = [
    for spare in local.spares : {
      name    = module.host[spare].name
      address = module.host[spare].address
      zone    = module.host[spare].zone
    }
  ]
}

output "pairs" {
  description = "[{name, master = {name, address, zone}, replicas = [{name, address, zone}, ...]}], in pair order."
  value = [
    for pair in local.pairs : {
      name = pair
      master = {
        name    = module.host["${pair}a"].name
        address = module.host["${pair}a"].address
        zone    = module.host["${pair}a"].zone
      }
      replicas = [
        for member in ["b", "c"] : {
          name    = module.host["${pair}${member}"].name
          address = module.host["${pair}${member}"].address
          zone    = module.host["${pair}${member}"].zone
        }
      ]
    }
  ]
}
