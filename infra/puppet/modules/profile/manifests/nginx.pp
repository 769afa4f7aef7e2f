# @summary nginx in front of gunicorn on a web host: plain HTTP on port 80 from the load
#   balancer (which ends TLS), static files from disk, everything else to gunicorn.
#
# @param client_max_body_size The largest request body (the site's upload limit).
# @param real_ip_from Addresses whose X-Forwarded-For is believed (the load balancer).
# @param site_domain The site's domain.
class profile::nginx (
  String[1] $client_max_body_size,
  Array[String[1], 1] $real_ip_from,
  String[1] $site_domain = lookup('pinboard::site_domain'),
) {
  include profile::pinboard::gunicorn

  package { 'nginx':
    ensure => installed,
  }

  file { '/etc/nginx/sites-available/pinboard':
    ensure  => file,
    owner   => 'root',
    group   => 'root',
    mode    => '0644',
    content => epp('profile/nginx-site.conf.epp', {
        'site_domain'          => $site_domain,
        'upstream'             => $profile::pinboard::gunicorn::bind,
        'client_max_body_size' => $client_max_body_size,
        'real_ip_from'         => $real_ip_from,
        'static_root'          => '/var/lib/pinboard/collected-static',
    }),
    require => Package['nginx'],
  }
  file { '/etc/nginx/sites-enabled/pinboard':
    ensure => link,
    target => '/etc/nginx/sites-available/pinboard',
  }
  # Debian's default site would answer on port 80 too.
  file { '/etc/nginx/sites-enabled/default':
    ensure  => absent,
    require => Package['nginx'],
  }

  service { 'nginx':
    ensure    => running,
    enable    => true,
    subscribe => File['/etc/nginx/sites-available/pinboard', '/etc/nginx/sites-enabled/pinboard', '/etc/nginx/sites-enabled/default'],
  }
}
