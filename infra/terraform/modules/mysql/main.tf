# MySQL (MariaDB) shard hosts, three per range: mysql001a in the first zone,
# mysql001b in the second and mysql001c in the first again, so the two replicas
# never share a zone and a zone's loss leaves a replica that has every
# acknowledged write. Which member is master is the shard map's business; the
# first layout makes "a" the master, "b" and "c" its replicas. The spares
# (mysqlspare01, ...), alternately in each zone, serve no range: the guard
# (shardstore guard) makes one a replica in the place of one that died.

locals {
  pairs  = [for i in range(1, var.pair_count + 1) : format("mysql%03d", i)]
  spares = [for i in range(1, var.spare_count + 1) : format("mysqlspare%02d", i)]

  hosts = merge(
    merge([
      for pair in local.pairs : {
        "${pair}a" = var.private_subnet_ids[0]
        "${pair}b" = var.private_subnet_ids[1]
        "${pair}c" = var.private_subnet_ids[0]
      }
    ]...),
    { for i, spare in local.spares : spare => var.private_subnet_ids[i % 2] },
  )
}

module "host" {
  source   = "../host"
  for_each = local.hosts

  name               = each.key
  role               = "mysql_shard"
  bootstrap          = var.bootstrap
  subnet_id          = each.value
  security_group_ids = [var.security_group]
  instance_type      = var.instance_type
  instance_profile   = var.instance_profile
  pre_puppet         = file("${path.module}/stripe-instance-store.sh")
  extra_packages     = ["mdadm", "xfsprogs", "nvme-cli"]
}
