# @summary A Redis server that must not lose data: the follower graph and home feeds
#   (role redis), or Celery's queues and pinners' sessions and rate limits (role broker).
#   Appends every write to its AOF, fsynced every second, so a restart keeps them, and
#   refuses writes when full rather than evicting keys.
#
# @param maxmemory_percent The share of the host's memory Redis may use.
class profile::redis (
  Integer[10, 90] $maxmemory_percent,
) {
  include profile::base

  package { 'redis-server':
    ensure => installed,
  }

  file { '/etc/redis/redis.conf':
    ensure  => file,
    owner   => 'redis',
    group   => 'redis',
    mode    => '0640',
    content => epp('profile/redis.conf.epp', {
        'address'      => $facts['networking']['ip'],
        'maxmemory_mb' => $facts['memory']['system']['total_bytes'] * $maxmemory_percent / 100 / 1048576,
    }),
    require => Package['redis-server'],
  }

  # The data directory is the mount point of the host's EBS volume (mounted by user_data
  # before the package existed): its owner is set here.
  file { '/var/lib/redis':
    ensure  => directory,
    owner   => 'redis',
    group   => 'redis',
    mode    => '0750',
    require => Package['redis-server'],
  }

  service { 'redis-server':
    ensure    => running,
    enable    => true,
    subscribe => File['/etc/redis/redis.conf'],
    require   => File['/var/lib/redis'],
  }
}
