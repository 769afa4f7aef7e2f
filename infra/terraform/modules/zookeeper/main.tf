# The three-node ZooKeeper ensemble that holds the shard map: zk1 and zk3 in
# the first zone, zk2 in the second (three nodes over two zones: losing the
# first zone loses the quorum, losing the second does not).

locals {
  nodes = {
    for id in [1, 2, 3] : "zk${id}" => {
      id     = id
      subnet = var.private_subnet_ids[(id - 1) % length(var.private_subnet_ids)]
    }
  }
}

module "host" {
  source   = "../host"
  for_each = local.nodes

  name               = each.key
  role               = "zookeeper"
  bootstrap          = var.bootstrap
  subnet_id          = each.value.subnet
  security_group_ids = [var.security_group]
  instance_type      = var.instance_type
  instance_profile   = var.instance_profile
  data_volume = {
    size        = var.data_volume_size
    mount_point = "/var/lib/zookeeper"
  }
}
