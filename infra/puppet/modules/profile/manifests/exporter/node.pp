# @summary prometheus-node-exporter (Debian's package) on every host: the machine's
#   metrics (CPU, memory, disks, network) and the state of the deploy's own systemd
#   units, for the monitoring host to scrape on the private address.
#
# Security groups admit the port from the monitoring host's group only (Terraform:
# modules/security).
#
# @param port The port it listens on (the monitoring host's job node scrapes it).
# @param units The systemd units whose state it exports (a regular expression).
class profile::exporter::node (
  Integer[1, 65535] $port,
  String[1] $units,
) {
  package { 'prometheus-node-exporter':
    ensure => installed,
  }

  # systemd's EnvironmentFile: the unit passes $ARGS split on white space.
  $args = [
    "--web.listen-address=${facts['networking']['ip']}:${port}",
    '--collector.systemd',
    "--collector.systemd.unit-include=${units}",
  ].join(' ')
  file { '/etc/default/prometheus-node-exporter':
    ensure  => file,
    owner   => 'root',
    group   => 'root',
    mode    => '0644',
    content => "# Written by Puppet (profile::exporter::node).\nARGS=\"${args}\"\n",
    require => Package['prometheus-node-exporter'],
  }

  service { 'prometheus-node-exporter':
    ensure    => running,
    enable    => true,
    subscribe => File['/etc/default/prometheus-node-exporter'],
  }
}
