# @summary The site's release under /opt/pinboard with its virtualenv, and the environment
#   file /etc/pinboard/env that gunicorn and Celery read (and on shard hosts, their
#   backup timer: profile::mysql_backup).
#
# The release archive (the project tree) comes from the artifacts bucket; it is unpacked
# into /opt/pinboard/releases/<release>, gets its own virtualenv, and /opt/pinboard/current
# points at it. The secrets (SSM SecureStrings) never pass through Puppet: pinboard-env
# reads them with the AWS CLI at apply time and writes them beside the rest of the
# environment, so they appear in no catalog, report or log.
#
# @param operator Whether this host runs operator commands (failover, splits, long jobs'
#   chunks): only then does its environment carry PINBOARD_MYSQL_ADMIN (shard hosts
#   aside: see site), and PINBOARD_FENCE_COMMAND with the fence script it runs. Workers
#   do; web hosts never hold the operators' MySQL password, nor may they fence a host.
# @param site Whether this host serves the site or runs its tasks (web and worker hosts):
#   only then does its environment carry the site's secret key and the control database.
#   A shard host runs the release for its backups alone: its environment has neither
#   (the backup unit gives itself a throwaway key: it signs nothing), but the admin
#   login, which mariadb-backup logs in with.
# @param backups Whether this host uses the backup store: shard hosts put their backups,
#   workers archive the binary logs, verify and restore. Web hosts may not read it
#   (Terraform: modules/iam).
# @param environment staging or production.
# @param release The release to run.
# @param artifacts_bucket Where releases are: s3://<bucket>/<environment>/releases/.
# @param region The AWS region of SSM and S3.
# @param ssm_prefix The SSM path of this environment's parameters.
# @param site_domain The site's domain (ALLOWED_HOSTS).
# @param media_domain CloudFront's domain for pin images.
# @param media_bucket The S3 bucket of pin images (none: images on this host's disk).
# @param control_database The control database every web and worker host shares
#   ({address, port, name}; the site logs in as pinboard_site with SSM's
#   control_db_password, over TLS). None: SQLite on this host, for a single host only.
# @param hosts Every named host by name: the memcached servers among them are the
#   store's pools until a caches document in ZooKeeper names them.
# @param broker_address The Celery broker's address: its Redis also holds pinners'
#   sessions and rate limits (database 1).
# @param zookeeper The ZooKeeper ensemble.
# @param fenced_security_group The security group with no rule an emergency failover's
#   fence moves a shard master into (pinboard-fence-mysql) before it stops the instance.
#   None: operator hosts have no fence command, and an emergency failover refuses.
# @param backup_store Where the backups and the archived binary logs are
#   (s3://<bucket>/<environment>). None: no backups (profile::mysql_backup and
#   profile::pinboard::recovery then install no backup unit).
# @param backup_kms_key The KMS key each backup object is put with (SSE-KMS).
class profile::pinboard::app (
  Boolean $operator = $facts['pinboard_role'] == 'worker',
  Boolean $site = $facts['pinboard_role'] != 'mysql_shard',
  Boolean $backups = $facts['pinboard_role'] in ['worker', 'mysql_shard'],
  Enum['staging', 'production'] $environment = $facts['pinboard_environment'],
  String[1] $release = lookup('pinboard::release'),
  String[1] $artifacts_bucket = lookup('pinboard::artifacts_bucket'),
  String[1] $region = lookup('pinboard::region'),
  Pattern[/\A\/.*\/\z/] $ssm_prefix = lookup('pinboard::ssm_prefix'),
  String[1] $site_domain = lookup('pinboard::site_domain'),
  String[1] $media_domain = lookup('pinboard::media_domain'),
  Optional[String[1]] $media_bucket = lookup('pinboard::media_bucket', Optional[String[1]], 'first', undef),
  Optional[Struct[{ address => String[1], port => Integer[1], name => String[1] }]] $control_database =
    lookup('pinboard::control_database', Optional[Hash], 'first', undef),
  Hash[String[1], String[1]] $hosts = lookup('pinboard::hosts'),
  String[1] $broker_address = lookup('pinboard::broker_address'),
  Array[Struct[{ name => String[1], id => Integer[1, 255], address => String[1] }], 1] $zookeeper = lookup('pinboard::zookeeper'),
  Optional[Pattern[/\Asg-[0-9a-f]+\z/]] $fenced_security_group =
    lookup('pinboard::fenced_security_group', Optional[String[1]], 'first', undef),
  Optional[Pattern[/\As3:\/\/[a-z0-9.-]+\/[^\/]+\z/]] $backup_store =
    lookup('pinboard::backup_store', Optional[String[1]], 'first', undef),
  Optional[Pattern[/\Aarn:aws[a-z-]*:kms:/]] $backup_kms_key =
    lookup('pinboard::backup_kms_key', Optional[String[1]], 'first', undef),
) {
  include profile::base

  $root = '/opt/pinboard'
  $release_dir = "${root}/releases/${release}"
  $archive = "s3://${artifacts_bucket}/${environment}/releases/pinboard-${release}.tar.gz"

  # mysqlclient is built from source against MariaDB's client library.
  package { ['build-essential', 'pkg-config', 'python3-dev', 'libmariadb-dev']:
    ensure => installed,
  }

  file { [$root, "${root}/releases"]:
    ensure => directory,
    owner  => 'root',
    group  => 'root',
    mode   => '0755',
  }

  # Unpacked beside its final name and renamed, so a half-unpacked release is never run.
  $unpack = [
    "rm -rf ${release_dir}.new",
    "mkdir ${release_dir}.new",
    "aws --region ${region} s3 cp ${archive} - | tar -xzf - -C ${release_dir}.new",
    "mv ${release_dir}.new ${release_dir}",
  ].join('; ')
  exec { "pinboard release ${release}":
    command => "/bin/sh -ec '${unpack}'",
    creates => $release_dir,
    path    => ['/usr/bin', '/bin'],
    require => [File["${root}/releases"], Package['awscli']],
  }

  $requirements = "-r ${release_dir}/requirements.txt -r ${release_dir}/requirements-mysql.txt"
  exec { "pinboard virtualenv ${release}":
    command => "/bin/sh -ec 'python3 -m venv ${release_dir}/venv; ${release_dir}/venv/bin/pip install --no-cache-dir ${requirements}'",
    creates => "${release_dir}/venv/bin/gunicorn",
    path    => ['/usr/bin', '/bin'],
    timeout => 1800,
    require => [
      Exec["pinboard release ${release}"],
      Package['python3-venv', 'build-essential', 'pkg-config', 'python3-dev', 'libmariadb-dev'],
    ],
  }

  file { "${root}/current":
    ensure  => link,
    target  => $release_dir,
    require => Exec["pinboard virtualenv ${release}"],
  }

  file { '/etc/pinboard':
    ensure => directory,
    owner  => 'root',
    group  => 'pinboard',
    mode   => '0750',
  }

  $memcached = $hosts.filter |$name, $address| { $name =~ /\Amemcached-/ }
    .map |$name, $address| { "${address}:11211" }.sort.join(',')

  # The fence an emergency failover runs on an operator host before it promotes a replica
  # (given the host's name and host:port): the instance's security groups swapped for the
  # fenced group, then the instance stopped. The worker role may do that to this
  # environment's shard hosts only (Terraform: modules/iam).
  $fence = '/usr/local/sbin/pinboard-fence-mysql'
  if $operator {
    file { $fence:
      ensure  => file,
      owner   => 'root',
      group   => 'root',
      mode    => '0755',
      source  => 'puppet:///modules/profile/pinboard-fence-mysql',
      require => Package['awscli', 'jq'],
    }
  }
  $fence_command = ($operator and $fenced_security_group) ? {
    true    => "${fence} ${region} ${fenced_security_group} ${environment}",
    default => undef,
  }

  # The backup store, only where the instance role may use it.
  $store = $backups ? { true => $backup_store, default => undef }
  $store_key = $backups ? { true => $backup_kms_key, default => undef }

  # Everything but the secrets; pinboard-env appends those and installs /etc/pinboard/env.
  $topology = $zookeeper.map |$server| { "${server['address']}:2181" }.join(',')
  file { '/etc/pinboard/env.public':
    ensure  => file,
    owner   => 'root',
    group   => 'pinboard',
    mode    => '0640',
    content => epp('profile/env.epp', {
        'topology'           => "zk://${topology}/pinboard",
        'broker_url'         => "redis://${broker_address}:6379/0",
        # Pinners' sessions and rate limits: database 1 of the broker's Redis, whose
        # append-only file keeps them through a restart (profile::redis).
        'sessions_redis_url' => "redis://${broker_address}:6379/1",
        'site_domain'        => $site_domain,
        'media_domain'       => $media_domain,
        'media_bucket'       => $media_bucket,
        'region'             => $region,
        'memcached'          => $memcached,
        'fence_command'      => $fence_command,
        'backup_store'       => $store,
        'backup_kms_key'     => $store_key,
    }),
  }

  # RDS's certificate authorities (not in Debian's ca-certificates): the control
  # database is reached over TLS, checked against them.
  exec { 'RDS certificate bundle':
    command => '/usr/bin/curl -fsSL -o /etc/pinboard/rds-ca.pem https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem',
    creates => '/etc/pinboard/rds-ca.pem',
    require => [File['/etc/pinboard'], Package['curl']],
  }

  file { '/usr/local/sbin/pinboard-env':
    ensure => file,
    owner  => 'root',
    group  => 'root',
    mode   => '0755',
    source => 'puppet:///modules/profile/pinboard-env',
  }

  # Runs whenever /etc/pinboard/env differs from what it would write now (the public
  # part, or a secret rotated in SSM): pinboard-env --check compares. Through /bin/sh,
  # so that before pinboard-env is installed (a first noop run) the check fails instead
  # of erroring.
  $control = ($site and $control_database) ? {
    true    => " ${control_database['address']}:${control_database['port']}/${control_database['name']}",
    default => '',
  }
  $no_secret_key = $site ? { true => '', default => '--no-secret-key ' }
  $admin_logins = $operator or !$site
  $env_args = "${no_secret_key}/etc/pinboard/env.public /etc/pinboard/env ${region} ${ssm_prefix} ${admin_logins}${control}"
  exec { 'pinboard environment file':
    command   => "/bin/sh /usr/local/sbin/pinboard-env ${env_args}",
    unless    => "/bin/sh /usr/local/sbin/pinboard-env --check ${env_args}",
    path      => ['/usr/bin', '/bin'],
    logoutput => false,
    require   => [
      File['/etc/pinboard/env.public', '/usr/local/sbin/pinboard-env'],
      Package['awscli'],
      Group['pinboard'],
    ],
  }
}
