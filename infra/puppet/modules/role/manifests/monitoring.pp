# @summary The monitoring host: Prometheus, scraping every host's exporters and the
#   site's own metrics.
class role::monitoring {
  include profile::base
  include profile::prometheus
}
