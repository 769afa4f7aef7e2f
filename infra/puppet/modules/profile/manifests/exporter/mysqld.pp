# @summary prometheus-mysqld-exporter (Debian's package, 0.14) on a shard host: MariaDB's
#   status, InnoDB and replication (SHOW ALL SLAVES STATUS: the pair's stream and a split's
#   reverse stream) for the monitoring host to scrape on the private address.
#
# It logs in over the local socket as the account exporter, which pinboard-mysql-accounts
# makes from SSM (mysql_exporter_password) with the monitoring privileges only, and whose
# client file it writes: the password never passes through Puppet. The exporter reads that
# file once, at start: it restarts whenever the accounts script ran (a rotated password).
#
# @param port The port it listens on (the monitoring host's job mysqld scrapes it).
class profile::exporter::mysqld (
  Integer[1, 65535] $port,
) {
  include profile::mysql_shard

  # The client options (user, password, socket), readable by the prometheus group only.
  $client_file = $profile::mysql_shard::exporter_client_file

  package { 'prometheus-mysqld-exporter':
    ensure => installed,
  }

  # The default collectors (global status and variables, SHOW ALL SLAVES STATUS, InnoDB
  # compression), the binary logs' size and the process list; none that walks every
  # table of the thousands a shard host holds (info_schema.tables and the like).
  $args = [
    "--config.my-cnf=${client_file}",
    "--web.listen-address=${facts['networking']['ip']}:${port}",
    '--collect.binlog_size',
    '--collect.info_schema.processlist',
  ].join(' ')
  file { '/etc/default/prometheus-mysqld-exporter':
    ensure  => file,
    owner   => 'root',
    group   => 'root',
    mode    => '0644',
    content => "# Written by Puppet (profile::exporter::mysqld).\nARGS=\"${args}\"\n",
    require => Package['prometheus-mysqld-exporter'],
  }

  # The accounts script gives the client file to the package's prometheus group.
  Package['prometheus-mysqld-exporter'] -> Exec['mysql accounts']

  service { 'prometheus-mysqld-exporter':
    ensure    => running,
    enable    => true,
    subscribe => [File['/etc/default/prometheus-mysqld-exporter'], Exec['mysql accounts']],
  }
}
