# @summary What lets the data tier recover, on a worker host: the guard (pinboard-guard,
#   `shardstore guard run`), which fails dead masters over and replaces dead replicas
#   with spares; the binary-log archiver (pinboard-binlog-archive, `shardstore backup
#   archive`), which puts every master's binary logs into the backup store as they are
#   written; a daily verification of every range's newest backup (timer
#   pinboard-backup-verify, `shardstore backup verify --all`); and what an operator's
#   restore needs (`shardstore restore`, `restore-shard`): mariadbd for its scratch
#   server, mariadb-backup and zstd to unpack a backup, mariadb-binlog to replay the
#   archive.
#
# Every worker host runs a guard and an archiver, each taking its lock in ZooKeeper: the
# holder acts, the others wait to take over from one that dies. They run as pinboard with
# the site's environment (profile::pinboard::app), like Celery; the worker role may put,
# read and list the store, never delete (Terraform: modules/iam).
#
# @param spool Where the archiver writes the binary logs as they come, until each is whole
#   in the store (kept across restarts).
# @param verify_on_calendar When the verification timer fires (systemd.time): after the
#   shard hosts' backups (profile::mysql_backup), so it verifies that day's.
# @param verify_randomized_delay How much later, at random, each worker host starts.
# @param verify_timeout How long a verification of every range may run.
# @param instance This host's name in the guard's and the archiver's locks.
class profile::pinboard::recovery (
  Pattern[/\A\//] $spool,
  String[1] $verify_on_calendar,
  String[1] $verify_randomized_delay,
  String[1] $verify_timeout,
  String[1] $instance = $facts['networking']['hostname'],
) {
  include profile::base
  include profile::pinboard::app

  # mariadb-client may be one of every host's packages already (common.yaml): declared once.
  $packages = ['mariadb-server-core', 'mariadb-backup', 'zstd', 'mariadb-client'] - $profile::base::packages
  package { $packages:
    ensure => installed,
  }

  $units = '/etc/systemd/system'
  file { "${units}/pinboard-guard.service":
    ensure  => file,
    owner   => 'root',
    group   => 'root',
    mode    => '0644',
    content => epp('profile/guard.service.epp', { 'instance' => $instance }),
  }

  service { 'pinboard-guard':
    ensure    => running,
    enable    => true,
    subscribe => [
      File["${units}/pinboard-guard.service", '/opt/pinboard/current'],
      Exec['pinboard environment file'],
    ],
  }

  if $profile::pinboard::app::backup_store =~ Undef {
    warning('pinboard::backup_store is not set (deploy.yaml): no binary-log archiver, no verification of backups')
  } else {
    file { $spool:
      ensure => directory,
      owner  => 'pinboard',
      group  => 'pinboard',
      mode   => '0750',
    }

    file { "${units}/pinboard-binlog-archive.service":
      ensure  => file,
      owner   => 'root',
      group   => 'root',
      mode    => '0644',
      content => epp('profile/binlog-archive.service.epp', {
          'instance' => $instance,
          'spool'    => $spool,
      }),
    }

    service { 'pinboard-binlog-archive':
      ensure    => running,
      enable    => true,
      require   => [File[$spool], Package[$packages]],
      subscribe => [
        File["${units}/pinboard-binlog-archive.service", '/opt/pinboard/current'],
        Exec['pinboard environment file'],
      ],
    }

    file { "${units}/pinboard-backup-verify.service":
      ensure  => file,
      owner   => 'root',
      group   => 'root',
      mode    => '0644',
      content => epp('profile/backup-verify.service.epp', { 'timeout' => $verify_timeout }),
    }

    file { "${units}/pinboard-backup-verify.timer":
      ensure  => file,
      owner   => 'root',
      group   => 'root',
      mode    => '0644',
      content => epp('profile/timer.epp', {
          'profile'          => 'profile::pinboard::recovery',
          'description'      => "pinboard: verify every range's newest backup daily",
          'on_calendar'      => $verify_on_calendar,
          'randomized_delay' => $verify_randomized_delay,
      }),
    }

    # The timer's unit is reloaded with it; the service's only by this.
    exec { 'pinboard-backup-verify units':
      command     => 'systemctl daemon-reload',
      path        => ['/usr/bin', '/bin'],
      refreshonly => true,
      subscribe   => File["${units}/pinboard-backup-verify.service", "${units}/pinboard-backup-verify.timer"],
    }

    service { 'pinboard-backup-verify.timer':
      ensure    => running,
      enable    => true,
      require   => [
        Exec['pinboard-backup-verify units', 'pinboard environment file'],
        File['/opt/pinboard/current'],
        Package[$packages],
      ],
      subscribe => File["${units}/pinboard-backup-verify.timer"],
    }
  }
}
