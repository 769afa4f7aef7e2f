# @summary One member of a Redis pair for the follower graph and home feeds (redis001a, ...).
class role::redis {
  include profile::base
  include profile::redis
  include profile::exporter::redis
}
