# @summary The Celery worker (systemd unit pinboard-celery): fan-out to home feeds and
#   the long jobs' chunks, from the broker named in /etc/pinboard/env.
#
# @param concurrency Worker processes (Celery's prefork pool).
# @param metrics_port Where the worker's main process serves its metrics (every address;
#   the monitoring host's job worker scrapes it).
class profile::pinboard::celery (
  Integer[1] $concurrency,
  Integer[1, 65535] $metrics_port,
) {
  include profile::pinboard::app

  file { '/etc/systemd/system/pinboard-celery.service':
    ensure  => file,
    owner   => 'root',
    group   => 'root',
    mode    => '0644',
    content => epp('profile/celery.service.epp', {
        'concurrency'  => $concurrency,
        'metrics_port' => $metrics_port,
    }),
  }

  service { 'pinboard-celery':
    ensure    => running,
    enable    => true,
    subscribe => [
      File['/etc/systemd/system/pinboard-celery.service', '/opt/pinboard/current'],
      Exec['pinboard environment file'],
    ],
  }
}
