# @summary prometheus-redis-exporter (Debian's package) on a Redis host (the graph and
#   feeds' pairs, the broker): memory, persistence (AOF), replication and clients, for the
#   monitoring host to scrape on the private address.
#
# @param port The port it listens on (the monitoring host's job redis scrapes it).
class profile::exporter::redis (
  Integer[1, 65535] $port,
) {
  include profile::redis

  package { 'prometheus-redis-exporter':
    ensure => installed,
  }

  # Redis listens on loopback too (redis.conf.epp); the exporter's flags take one dash.
  $args = "-web.listen-address=${facts['networking']['ip']}:${port} -redis.addr=redis://127.0.0.1:6379"
  file { '/etc/default/prometheus-redis-exporter':
    ensure  => file,
    owner   => 'root',
    group   => 'root',
    mode    => '0644',
    content => "# Written by Puppet (profile::exporter::redis).\nARGS=\"${args}\"\n",
    require => Package['prometheus-redis-exporter'],
  }

  service { 'prometheus-redis-exporter':
    ensure    => running,
    enable    => true,
    subscribe => File['/etc/default/prometheus-redis-exporter'],
    require   => Service['redis-server'],
  }
}
