# @summary Prometheus on the monitoring host (Debian's package): it finds every host of
#   this environment through EC2's API (the instance role may describe instances) and
#   scrapes the exporters and the site's own metrics; its rules are the release's
#   (infra/monitoring/rules), its data on the host's EBS volume.
#
# Its web interface and API listen on loopback only: operators reach them through Session
# Manager's port forwarding (docs/deploy.md), as they reach every host.
#
# @param scrape_interval How often every target is scraped and rules are evaluated.
# @param retention_time How long samples are kept.
# @param retention_size The most the samples may take (below the data volume's size).
# @param listen The web interface's and API's address.
# @param jobs The scrape jobs: each a port and the Role tags of the instances it scrapes.
# @param mountpoint Where the data volume is mounted (by the instance's user_data).
# @param environment staging or production.
# @param region The AWS region (EC2 discovery, S3).
# @param release The release whose rules are loaded.
# @param artifacts_bucket Where releases are: s3://<bucket>/<environment>/releases/.
# @param host This host's name (the fact pinboard_host): Prometheus's own instance label.
class profile::prometheus (
  String[1] $scrape_interval,
  String[1] $retention_time,
  String[1] $retention_size,
  String[1] $listen,
  Hash[String[1], Struct[{ port => Integer[1, 65535], roles => Array[String[1], 1] }], 1] $jobs,
  Pattern[/\A\//] $mountpoint,
  Enum['staging', 'production'] $environment = $facts['pinboard_environment'],
  String[1] $region = lookup('pinboard::region'),
  String[1] $release = lookup('pinboard::release'),
  String[1] $artifacts_bucket = lookup('pinboard::artifacts_bucket'),
  String[1] $host = $facts['pinboard_host'],
) {
  include profile::base

  package { 'prometheus':
    ensure => installed,
  }

  # The volume is mounted before Puppet runs (Terraform: modules/host); Puppet only
  # insists on it: on the root volume the samples would fill the system's disk.
  exec { 'prometheus data on its volume':
    command => "/bin/sh -c 'echo \"${mountpoint} is not mounted: the data volume should be\" >&2; exit 1'",
    unless  => "mountpoint -q ${mountpoint}",
    path    => ['/usr/bin', '/bin'],
  }
  file { [$mountpoint, "${mountpoint}/metrics2"]:
    ensure  => directory,
    owner   => 'prometheus',
    group   => 'prometheus',
    mode    => '0750',
    require => [Package['prometheus'], Exec['prometheus data on its volume']],
  }
  # After a reboot Prometheus waits for the mount.
  file { '/etc/systemd/system/prometheus.service.d':
    ensure => directory,
  }
  file { '/etc/systemd/system/prometheus.service.d/pinboard-data.conf':
    ensure  => file,
    content => "[Unit]\nRequiresMountsFor=${mountpoint}\n",
  }

  $args = [
    '--config.file=/etc/prometheus/prometheus.yml',
    "--storage.tsdb.path=${mountpoint}/metrics2",
    "--storage.tsdb.retention.time=${retention_time}",
    "--storage.tsdb.retention.size=${retention_size}",
    "--web.listen-address=${listen}",
  ].join(' ')
  file { '/etc/default/prometheus':
    ensure  => file,
    owner   => 'root',
    group   => 'root',
    mode    => '0644',
    content => "# Written by Puppet (profile::prometheus).\nARGS=\"${args}\"\n",
    require => Package['prometheus'],
  }

  # The release's rules, each release in a directory of its own, checked before it is
  # installed; /etc/prometheus/rules points at the one in force.
  $rules_dir = '/etc/prometheus/rules'
  $release_rules = "/etc/prometheus/rules.d/${release}"
  $archive = "s3://${artifacts_bucket}/${environment}/releases/pinboard-${release}.tar.gz"
  file { '/etc/prometheus/rules.d':
    ensure  => directory,
    owner   => 'root',
    group   => 'root',
    mode    => '0755',
    require => Package['prometheus'],
  }
  file { '/usr/local/sbin/pinboard-prometheus-rules':
    ensure => file,
    owner  => 'root',
    group  => 'root',
    mode   => '0755',
    source => 'puppet:///modules/profile/pinboard-prometheus-rules',
  }
  exec { "prometheus rules ${release}":
    command => "/bin/sh /usr/local/sbin/pinboard-prometheus-rules ${region} ${archive} ${release_rules}",
    creates => $release_rules,
    path    => ['/usr/bin', '/bin'],
    require => [File['/etc/prometheus/rules.d', '/usr/local/sbin/pinboard-prometheus-rules'], Package['awscli']],
  }
  file { $rules_dir:
    ensure  => link,
    target  => $release_rules,
    force   => true,
    require => Exec["prometheus rules ${release}"],
  }

  file { '/etc/prometheus/prometheus.yml':
    ensure       => file,
    owner        => 'root',
    group        => 'root',
    mode         => '0644',
    content      => epp('profile/prometheus.yml.epp', {
        'environment'     => $environment,
        'region'          => $region,
        'scrape_interval' => $scrape_interval,
        'rules_dir'       => $rules_dir,
        'listen'          => $listen,
        'host'            => $host,
        'jobs'            => $jobs,
    }),
    validate_cmd => '/usr/bin/promtool check config %',
    require      => [Package['prometheus'], File[$rules_dir]],
  }

  # A new configuration or new rules: reloaded (SIGHUP), the samples in memory kept.
  service { 'prometheus':
    ensure    => running,
    enable    => true,
    restart   => '/bin/systemctl reload prometheus',
    require   => File["${mountpoint}/metrics2", '/etc/systemd/system/prometheus.service.d/pinboard-data.conf'],
    subscribe => File['/etc/prometheus/prometheus.yml', $rules_dir],
  }
  # New command-line options take a restart.
  exec { 'restart prometheus':
    command     => "/bin/sh -ec 'systemctl daemon-reload; systemctl try-restart prometheus'",
    path        => ['/usr/bin', '/bin'],
    refreshonly => true,
    subscribe   => File['/etc/default/prometheus', '/etc/systemd/system/prometheus.service.d/pinboard-data.conf'],
    require     => Service['prometheus'],
  }
}
