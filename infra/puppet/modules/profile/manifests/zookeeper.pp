# @summary A member of the ZooKeeper ensemble that holds the config documents (shard map,
#   Redis map, cache pools): zoo.cfg lists every member, myid is this host's id.
#
# @param host This host's name (the fact pinboard_host, e.g. zk1).
# @param ensemble The ensemble, from the generated Hiera data.
class profile::zookeeper (
  String[1] $host = $facts['pinboard_host'],
  Array[Struct[{ name => String[1], id => Integer[1, 255], address => String[1] }], 1] $ensemble = lookup('pinboard::zookeeper'),
) {
  include profile::base

  $me = $ensemble.filter |$member| { $member['name'] == $host }
  if $me.empty {
    fail("${host} is not a member of pinboard::zookeeper")
  }

  # zookeeperd: Debian's service (systemd unit zookeeper) around the zookeeper package.
  package { ['zookeeper', 'zookeeperd']:
    ensure => installed,
  }

  file { '/etc/zookeeper/conf/zoo.cfg':
    ensure  => file,
    owner   => 'root',
    group   => 'root',
    mode    => '0644',
    content => epp('profile/zoo.cfg.epp', { 'ensemble' => $ensemble }),
    require => Package['zookeeperd'],
  }
  # In the data directory, where ZooKeeper reads it.
  file { '/var/lib/zookeeper/myid':
    ensure  => file,
    owner   => 'zookeeper',
    group   => 'zookeeper',
    mode    => '0644',
    content => "${me[0]['id']}\n",
    require => Package['zookeeperd'],
  }

  # The data directory is the mount point of the host's EBS volume (mounted by user_data
  # before the package existed): its owner is set here.
  file { '/var/lib/zookeeper':
    ensure  => directory,
    owner   => 'zookeeper',
    group   => 'zookeeper',
    mode    => '0750',
    require => Package['zookeeperd'],
  }

  service { 'zookeeper':
    ensure    => running,
    enable    => true,
    subscribe => File['/etc/zookeeper/conf/zoo.cfg', '/var/lib/zookeeper/myid'],
    require   => File['/var/lib/zookeeper'],
  }
}
