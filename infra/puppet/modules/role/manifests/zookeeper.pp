# @summary A member of the ZooKeeper ensemble (zk1, zk2, zk3).
class role::zookeeper {
  include profile::base
  include profile::zookeeper
}
