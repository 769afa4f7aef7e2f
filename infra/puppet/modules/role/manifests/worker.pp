# @summary A worker host (autoscaling group): the Celery worker, which also runs the
#   operators' long jobs.
class role::worker {
  include profile::base
  include profile::pinboard::app
  include profile::pinboard::celery
}
