# @summary This shard host's backups (systemd timer pinboard-backup, every few minutes):
#   `shardstore backup take <this host> --replica-only --if-due 24`, which streams the
#   server through mariadb-backup and zstd into the backup store when the host is the
#   replica its range's backups are taken from and the range is due one (its newest a day
#   old, or one asked for: the console's "Back up now"), and does nothing otherwise: on a
#   master, a spare, a host out of service, or when no backup is due.
#
# The command is the release's manage.py, so the host gets the release and its environment
# file (profile::pinboard::app: the shard map's ZooKeeper, where the backup is recorded
# too, the admin login mariadb-backup logs in with, the store and its KMS key). The backup
# is put with the instance role's credentials, which may put and nothing else: no read,
# no list, no delete (Terraform: modules/iam, modules/backups).
#
# @param on_calendar When the timer fires (systemd.time).
# @param randomized_delay How much later, at random, each host starts.
# @param timeout How long a backup may run before it is stopped.
# @param host This host's name in the shard map (the fact pinboard_host, e.g. mysql001b).
class profile::mysql_backup (
  String[1] $on_calendar,
  String[1] $randomized_delay,
  String[1] $timeout,
  String[1] $host = $facts['pinboard_host'],
) {
  include profile::mysql_shard
  include profile::pinboard::app

  package { ['mariadb-backup', 'zstd']:
    ensure => installed,
  }

  if $profile::pinboard::app::backup_store =~ Undef {
    warning('pinboard::backup_store is not set (deploy.yaml): this shard host takes no backups')
  } else {
    file { '/etc/systemd/system/pinboard-backup.service':
      ensure  => file,
      owner   => 'root',
      group   => 'root',
      mode    => '0644',
      content => epp('profile/backup.service.epp', {
          'host'    => $host,
          'timeout' => $timeout,
      }),
    }

    file { '/etc/systemd/system/pinboard-backup.timer':
      ensure  => file,
      owner   => 'root',
      group   => 'root',
      mode    => '0644',
      content => epp('profile/timer.epp', {
          'profile'          => 'profile::mysql_backup',
          'description'      => "pinboard: a backup of ${host}, if it is a replica and one is due",
          'on_calendar'      => $on_calendar,
          'randomized_delay' => $randomized_delay,
      }),
    }

    # The timer's unit is reloaded with it; the service's only by this.
    exec { 'pinboard-backup units':
      command     => 'systemctl daemon-reload',
      path        => ['/usr/bin', '/bin'],
      refreshonly => true,
      subscribe   => File['/etc/systemd/system/pinboard-backup.service', '/etc/systemd/system/pinboard-backup.timer'],
    }

    service { 'pinboard-backup.timer':
      ensure    => running,
      enable    => true,
      require   => [
        Exec['pinboard-backup units', 'pinboard environment file'],
        File['/opt/pinboard/current'],
        Package['mariadb-backup', 'zstd'],
        Service['mariadb'],
      ],
      subscribe => File['/etc/systemd/system/pinboard-backup.timer'],
    }
  }
}
