# @summary What every instance has: the base packages, time from the Amazon Time Sync
#   Service, unattended security upgrades, the deploy's named hosts in /etc/hosts, the
#   pinboard system user and the machine's metrics (profile::exporter::node).
#
# @param packages Packages every host needs.
# @param hosts Every named host of the deploy and its private address (generated Hiera).
class profile::base (
  Array[String[1]] $packages = [],
  Hash[String[1], String[1]] $hosts = lookup('pinboard::hosts'),
) {
  include profile::exporter::node

  package { $packages:
    ensure => installed,
  }

  # Amazon Time Sync Service: a link-local NTP server on every instance.
  package { 'chrony':
    ensure => installed,
  }
  file { '/etc/chrony/sources.d/aws.sources':
    ensure  => file,
    content => "server 169.254.169.123 prefer iburst minpoll 4 maxpoll 4\n",
    require => Package['chrony'],
    notify  => Service['chrony'],
  }
  service { 'chrony':
    ensure => running,
    enable => true,
  }

  # Security updates from Debian, applied daily (no reboot: instances are replaced).
  package { 'unattended-upgrades':
    ensure => installed,
  }
  file { '/etc/apt/apt.conf.d/20auto-upgrades':
    ensure  => file,
    content => "APT::Periodic::Update-Package-Lists \"1\";\nAPT::Periodic::Unattended-Upgrade \"1\";\n",
    require => Package['unattended-upgrades'],
  }

  # The deploy's named hosts (zk1, mysql001a, ...) resolve on every host: the VPC's DNS
  # does not know them. Puppet owns /etc/hosts, so cloud-init must not rewrite it at boot.
  file { '/etc/cloud/cloud.cfg.d/99-pinboard-hosts.cfg':
    ensure  => file,
    content => "manage_etc_hosts: false\n",
  }
  file { '/etc/hosts':
    ensure  => file,
    owner   => 'root',
    group   => 'root',
    mode    => '0644',
    content => epp('profile/hosts.epp', {
        'address'  => $facts['networking']['ip'],
        'fqdn'     => $facts['networking']['fqdn'],
        'hostname' => $facts['networking']['hostname'],
        'hosts'    => $hosts,
    }),
  }

  group { 'pinboard':
    ensure => present,
    system => true,
  }
  user { 'pinboard':
    ensure     => present,
    system     => true,
    gid        => 'pinboard',
    home       => '/var/lib/pinboard',
    managehome => false,
    shell      => '/usr/sbin/nologin',
    require    => Group['pinboard'],
  }
  file { '/var/lib/pinboard':
    ensure => directory,
    owner  => 'pinboard',
    group  => 'pinboard',
    mode   => '0750',
  }
}
