# @summary A worker host (autoscaling group): the Celery worker, which also runs the
#   operators' long jobs; the guard, the binary-log archiver and the backups'
#   verification, and the operators' restores.
class role::worker {
  include profile::base
  include profile::pinboard::app
  include profile::pinboard::celery
  include profile::pinboard::recovery
}
