# @summary The site under gunicorn (systemd unit pinboard-gunicorn), with the project's
#   gunicorn.conf.py and the sizes of this environment; nginx is in front of it.
#
# @param bind Where gunicorn listens (nginx's upstream).
# @param workers gunicorn worker processes.
# @param threads Threads per worker.
# @param metrics_port Where gunicorn's master serves the site's metrics (every address;
#   the monitoring host's job web scrapes it).
class profile::pinboard::gunicorn (
  String[1] $bind,
  Integer[1] $workers,
  Integer[1] $threads,
  Integer[1, 65535] $metrics_port,
) {
  include profile::pinboard::app

  file { '/etc/systemd/system/pinboard-gunicorn.service':
    ensure  => file,
    owner   => 'root',
    group   => 'root',
    mode    => '0644',
    content => epp('profile/gunicorn.service.epp', {
        'bind'         => $bind,
        'workers'      => $workers,
        'threads'      => $threads,
        'metrics_port' => $metrics_port,
    }),
  }

  # nginx serves the static files from PINBOARD_VAR_DIR/collected-static. Production
  # settings want a strong secret key even for this: a throwaway one, not the site's.
  $manage = '/opt/pinboard/current/venv/bin/python /opt/pinboard/current/manage.py'
  exec { 'pinboard collectstatic':
    command     => "/bin/sh -ec 'PINBOARD_SECRET_KEY=$(head -c 48 /dev/urandom | base64 -w0) exec ${manage} collectstatic --noinput'",
    environment => ['DJANGO_SETTINGS_MODULE=pinboard.settings.prod', 'PINBOARD_VAR_DIR=/var/lib/pinboard'],
    cwd         => '/opt/pinboard/current',
    path        => ['/usr/bin', '/bin'],
    user        => 'pinboard',
    refreshonly => true,
    subscribe   => File['/opt/pinboard/current'],
  }

  # Puppet's systemd provider reloads systemd when a unit file has changed.
  service { 'pinboard-gunicorn':
    ensure    => running,
    enable    => true,
    subscribe => [
      File['/etc/systemd/system/pinboard-gunicorn.service', '/opt/pinboard/current'],
      Exec['pinboard environment file', 'pinboard collectstatic'],
    ],
  }
}
