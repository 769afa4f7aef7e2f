# @summary A web host (autoscaling group behind the load balancer): nginx in front of the
#   site under gunicorn.
class role::web {
  include profile::base
  include profile::pinboard::app
  include profile::pinboard::gunicorn
  include profile::nginx
}
