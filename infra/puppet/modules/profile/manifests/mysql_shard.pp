# @summary A MariaDB shard host (one member of a master/replica pair): the server with
#   the replication settings the local cluster runs, production's durability, InnoDB sized
#   from the host's memory, and its data on the instance-store NVMe drives striped as
#   RAID 0.
#
# Every shard host starts read-only (the fence). Its four accounts (the site's pinboard,
# the operators' admin, replication's repl and the metrics exporter's exporter) come from
# SSM; replication and opening a master are the control
# plane's (`shardstore bring-up`, `open-range`). A changed configuration does not restart the server:
# an operator restarts it when the pair can take it (a restarted master stays read-only).
#
# @param datadir MariaDB's data directory, on the RAID 0 array.
# @param mountpoint Where the array is mounted (by the instance's user_data).
# @param buffer_pool_percent The share of the host's memory for the InnoDB buffer pool.
# @param max_connections MariaDB's max_connections.
# @param innodb_log_file_size The redo log's size.
# @param innodb_io_capacity Background flushing rate (IOPS the drives sustain).
# @param table_open_cache Open tables cached (thousands of shard tables per host).
# @param table_definition_cache Table definitions cached: every table of every shard a
#   host may hold (4096 shards of 30 tables), so a whole-host diff parses each once.
# @param binlog_expire_days How long binary logs are kept (a rebuilt replica needs them).
# @param clients The hosts the accounts may connect from (a MySQL host pattern: the VPC).
# @param exporter_client_file The metrics exporter's client options (its account's
#   password), written by the accounts script for profile::exporter::mysqld.
# @param region The AWS region of SSM.
# @param ssm_prefix The SSM path of this environment's parameters.
# @param host This host's name (the fact pinboard_host, e.g. mysql001a).
# @param mysql_pairs The deploy's MySQL pairs.
# @param mysql_spares The deploy's spare shard hosts: configured alike, serving no range
#   until the guard makes one a replica in the place of one that died.
class profile::mysql_shard (
  Pattern[/\A\//] $datadir,
  Pattern[/\A\//] $mountpoint,
  Integer[10, 90] $buffer_pool_percent,
  Integer[1] $max_connections,
  String[1] $innodb_log_file_size,
  Integer[100] $innodb_io_capacity,
  Integer[1] $table_open_cache,
  Integer[1] $table_definition_cache,
  Integer[1] $binlog_expire_days,
  String[1] $clients,
  Pattern[/\A\//] $exporter_client_file,
  String[1] $region = lookup('pinboard::region'),
  Pattern[/\A\/.*\/\z/] $ssm_prefix = lookup('pinboard::ssm_prefix'),
  String[1] $host = $facts['pinboard_host'],
  Array[Struct[{ master => String[1], replicas => Array[String[1], 1] }], 1] $mysql_pairs = lookup('pinboard::mysql_pairs'),
  Array[String[1]] $mysql_spares = lookup('pinboard::mysql_spares', Array[String[1]], 'first', []),
) {
  include profile::base

  $pair = $mysql_pairs.filter |$p| { $host == $p['master'] or $host in $p['replicas'] }
  if $pair.empty and !($host in $mysql_spares) {
    fail("${host} is in no MySQL pair of pinboard::mysql_pairs, nor in pinboard::mysql_spares")
  }
  $deploy_role = $pair.empty ? {
    true    => 'spare',
    default => $pair[0]['master'] ? { $host => 'master', default => 'replica' },
  }

  package { ['mariadb-server', 'mdadm']:
    ensure => installed,
  }

  # The array itself is made before Puppet runs, by the instance's user_data (Terraform's
  # modules/mysql/stripe-instance-store.sh): every instance-store NVMe drive striped as
  # /dev/md/mysql, mounted on the mount point by /etc/fstab. Puppet only insists on it:
  # on the root volume the data would be slow and the drives idle.
  exec { 'mysql data on its array':
    command => "/bin/sh -c 'echo \"${mountpoint} is not mounted: the instance-store array should be\" >&2; exit 1'",
    unless  => "mountpoint -q ${mountpoint}",
    path    => ['/usr/bin', '/bin'],
  }
  # After a reboot MariaDB waits for the mount.
  file { '/etc/systemd/system/mariadb.service.d':
    ensure => directory,
  }
  file { '/etc/systemd/system/mariadb.service.d/pinboard-data.conf':
    ensure  => file,
    content => "[Unit]\nRequiresMountsFor=${mountpoint}\n",
    before  => Service['mariadb'],
  }

  file { $datadir:
    ensure  => directory,
    owner   => 'mysql',
    group   => 'mysql',
    mode    => '0750',
    require => [Package['mariadb-server'], Exec['mysql data on its array']],
  }

  file { '/etc/mysql/mariadb.conf.d/60-pinboard.cnf':
    ensure  => file,
    owner   => 'root',
    group   => 'root',
    mode    => '0644',
    content => epp('profile/my.cnf.epp', {
        'host'                   => $host,
        'deploy_role'            => $deploy_role,
        'ipv4'                   => $facts['networking']['ip'],
        'memory_bytes'           => $facts['memory']['system']['total_bytes'],
        'buffer_pool_percent'    => $buffer_pool_percent,
        'datadir'                => $datadir,
        'max_connections'        => $max_connections,
        'innodb_log_file_size'   => $innodb_log_file_size,
        'innodb_io_capacity'     => $innodb_io_capacity,
        'table_open_cache'       => $table_open_cache,
        'table_definition_cache' => $table_definition_cache,
        'binlog_expire_days'     => $binlog_expire_days,
    }),
    require => Package['mariadb-server'],
  }

  # The system tables in the new data directory, once.
  exec { 'mysql data directory':
    command => "mariadb-install-db --user=mysql --datadir=${datadir} --skip-test-db",
    creates => "${datadir}/mysql",
    path    => ['/usr/bin', '/bin'],
    require => File[$datadir, '/etc/mysql/mariadb.conf.d/60-pinboard.cnf'],
  }

  # Debian's package starts MariaDB on its own data directory before this configuration
  # exists: restart it once, when the new data directory is made (it holds no data yet).
  service { 'mariadb':
    ensure    => running,
    enable    => true,
    subscribe => Exec['mysql data directory'],
  }

  file { '/usr/local/sbin/pinboard-mysql-accounts':
    ensure => file,
    owner  => 'root',
    group  => 'root',
    mode   => '0755',
    source => 'puppet:///modules/profile/pinboard-mysql-accounts',
  }

  # Runs when an account is missing or SSM holds another password (rotated). Through
  # /bin/sh, so that a first noop run (the script not installed yet) reports it instead
  # of erroring.
  $accounts_args = "${region} ${ssm_prefix} ${clients} ${exporter_client_file}"
  exec { 'mysql accounts':
    command   => "/bin/sh /usr/local/sbin/pinboard-mysql-accounts ${accounts_args}",
    unless    => "/bin/sh /usr/local/sbin/pinboard-mysql-accounts --check ${accounts_args}",
    path      => ['/usr/bin', '/bin'],
    logoutput => false,
    require   => [Service['mariadb'], File['/usr/local/sbin/pinboard-mysql-accounts'], Package['awscli']],
  }
}
