# @summary A memcached server of one cache pool (users, boards, pins, lists), listening on
#   the host's private address.
#
# @param memory_mb Memory for items.
# @param max_connections Simultaneous connections (every web and worker process holds some).
# @param threads Worker threads.
class profile::memcached (
  Integer[64] $memory_mb,
  Integer[1] $max_connections,
  Integer[1] $threads,
) {
  include profile::base

  package { 'memcached':
    ensure => installed,
  }

  file { '/etc/memcached.conf':
    ensure  => file,
    owner   => 'root',
    group   => 'root',
    mode    => '0644',
    content => epp('profile/memcached.conf.epp', {
        'address'         => $facts['networking']['ip'],
        'memory_mb'       => $memory_mb,
        'max_connections' => $max_connections,
        'threads'         => $threads,
    }),
    require => Package['memcached'],
  }

  service { 'memcached':
    ensure    => running,
    enable    => true,
    subscribe => File['/etc/memcached.conf'],
  }
}
