# @summary A memcached server of one cache pool (memcached-users-1, ...).
class role::memcached {
  include profile::base
  include profile::memcached
}
