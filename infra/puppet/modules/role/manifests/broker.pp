# @summary Celery's broker (broker001): a Redis with the same durability as the graph's,
#   so a queued task survives a restart.
class role::broker {
  include profile::base
  include profile::redis
  include profile::exporter::redis
}
