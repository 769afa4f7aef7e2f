# @summary One member of a MySQL shard pair (mysql001a, mysql001b, ...), or a spare; its
#   daily backup when it is a replica in service.
class role::mysql_shard {
  include profile::base
  include profile::mysql_shard
  include profile::exporter::mysqld
  include profile::mysql_backup
}
