output "pairs" {
  description = "[{name, primary = {name, address, zone}, replica = {name, address, zone}}], in pair order."
  value = [
    for pair in local.pairs : {
      name = pair
      primary = {
        name    = module.host["${pair}a"].name
        address = module.host["${pair}a"].address
        zone    = module.host["${pair}a"].zone
      }
      replica = {
        name    = module.host["${pair}b"].name
        address = module.host["${pair}b"].address
        zone    = module.host["${pair}b"].zone
      }
    }
  ]
}

output "broker" {
  description = "{name, address} of Celery's broker."
  value = {
    name    = module.broker.name
    address = module.broker.address
  }
}
