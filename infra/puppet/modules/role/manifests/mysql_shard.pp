# @summary One member of a MySQL shard pair (mysql001a, mysql001b, ...).
class role::mysql_shard {
  include profile::base
  include profile::mysql_shard
  include profile::exporter::mysqld
}
