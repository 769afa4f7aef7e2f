# Masterless entry point: every instance applies this with the external facts that its
# user_data wrote to /etc/facter/facts.d/pinboard.yaml, and becomes its role.
node default {
  $role = $facts['pinboard_role']
  if $role =~ Undef or $role == '' {
    fail(@(MESSAGE/L))
      The fact pinboard_role is not set: /etc/facter/facts.d/pinboard.yaml should name \
      this host's role (web, worker, mysql_shard, memcached, redis, broker, zookeeper, \
      monitoring).
      | MESSAGE
  }
  if $facts['pinboard_environment'] !~ Enum['staging', 'production'] {
    fail("The fact pinboard_environment must be staging or production, not '${facts['pinboard_environment']}'.")
  }
  include "role::${role}"
}
