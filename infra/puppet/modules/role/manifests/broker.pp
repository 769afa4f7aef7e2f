# @summary Celery's broker (broker001): a Redis with the same durability as the graph's,
#   so a queued task survives a restart; its database 1 holds pinners' sessions and rate
#   limits (PINBOARD_SESSIONS_REDIS_URL), which a restart keeps too.
class role::broker {
  include profile::base
  include profile::redis
  include profile::exporter::redis
}
