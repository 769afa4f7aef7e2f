# One security group per tier. Each port is open only to the tiers that use
# it (the deploy contract's port list); nothing listens for SSH: operators use
# SSM Session Manager. Instances may leave the VPC on 80/443 only (Debian
# mirrors, S3, SSM and the other AWS APIs, through the NAT gateways).
#
# The monitoring host's group admits nothing: it scrapes the others, and each tier's
# metrics ports (the exporters, the site's own) are open to it alone. Its web interface
# listens on loopback, reached through Session Manager's port forwarding.
#
# And the fenced group, which has no rule at all: an emergency failover swaps a
# shard host's groups for it, then stops the instance (pinboard-fence-mysql,
# infra/puppet), so that a master cut off from the operators takes no write.

locals {
  tiers = {
    alb        = "Load balancer: HTTPS (and HTTP to redirect) from the internet"
    web        = "Web hosts: nginx behind the load balancer"
    worker     = "Celery worker hosts: no inbound traffic"
    mysql      = "MySQL shard hosts"
    memcached  = "Memcached pool hosts"
    redis      = "Redis pairs and the Celery broker"
    zookeeper  = "ZooKeeper ensemble"
    control_db = "Control database (RDS MariaDB): MySQL from web and worker hosts"
    monitoring = "Monitoring host (Prometheus): no inbound traffic; scrapes every tier"
  }

  # Traffic between tiers: each entry opens `port` on `to` for `from` (an
  # ingress rule on `to` and the matching egress rule on `from`).
  flows = {
    alb_to_web           = { from = "alb", to = "web", port = 80, what = "HTTP from the load balancer to nginx" }
    web_to_mysql         = { from = "web", to = "mysql", port = 3306, what = "MySQL from web hosts" }
    worker_to_mysql      = { from = "worker", to = "mysql", port = 3306, what = "MySQL from worker hosts" }
    mysql_to_mysql       = { from = "mysql", to = "mysql", port = 3306, what = "MySQL replication between shard hosts" }
    web_to_memcached     = { from = "web", to = "memcached", port = 11211, what = "memcached from web hosts" }
    worker_to_memcached  = { from = "worker", to = "memcached", port = 11211, what = "memcached from worker hosts" }
    web_to_redis         = { from = "web", to = "redis", port = 6379, what = "Redis (graph, feeds, broker) from web hosts" }
    worker_to_redis      = { from = "worker", to = "redis", port = 6379, what = "Redis (graph, feeds, broker) from worker hosts" }
    redis_to_redis       = { from = "redis", to = "redis", port = 6379, what = "Redis replication between primary and replica" }
    web_to_zk            = { from = "web", to = "zookeeper", port = 2181, what = "ZooKeeper clients on web hosts" }
    worker_to_zk         = { from = "worker", to = "zookeeper", port = 2181, what = "ZooKeeper clients on worker hosts" }
    mysql_to_zk          = { from = "mysql", to = "zookeeper", port = 2181, what = "ZooKeeper clients on shard hosts (their backup timer)" }
    zk_quorum            = { from = "zookeeper", to = "zookeeper", port = 2888, what = "ZooKeeper followers to the leader" }
    zk_election          = { from = "zookeeper", to = "zookeeper", port = 3888, what = "ZooKeeper leader election" }
    web_to_control_db    = { from = "web", to = "control_db", port = 3306, what = "MySQL from web hosts to the control database" }
    worker_to_control_db = { from = "worker", to = "control_db", port = 3306, what = "MySQL from worker hosts to the control database" }
    # Prometheus's scrapes: the site's metrics, the exporters, every host's node exporter
    # (its own host's it reaches over loopback, which no security group filters).
    monitoring_to_web_metrics    = { from = "monitoring", to = "web", port = 9108, what = "Prometheus scrapes the site's metrics (gunicorn)" }
    monitoring_to_worker_metrics = { from = "monitoring", to = "worker", port = 9109, what = "Prometheus scrapes the Celery worker's metrics" }
    monitoring_to_mysqld         = { from = "monitoring", to = "mysql", port = 9104, what = "Prometheus scrapes the MySQL exporter" }
    monitoring_to_redis_exporter = { from = "monitoring", to = "redis", port = 9121, what = "Prometheus scrapes the Redis exporter" }
    monitoring_to_web_node       = { from = "monitoring", to = "web", port = 9100, what = "Prometheus scrapes the node exporter" }
    monitoring_to_worker_node    = { from = "monitoring", to = "worker", port = 9100, what = "Prometheus scrapes the node exporter" }
    monitoring_to_mysql_node     = { from = "monitoring", to = "mysql", port = 9100, what = "Prometheus scrapes the node exporter" }
    monitoring_to_memcached_node = { from = "monitoring", to = "memcached", port = 9100, what = "Prometheus scrapes the node exporter" }
    monitoring_to_redis_node     = { from = "monitoring", to = "redis", port = 9100, what = "Prometheus scrapes the node exporter" }
    monitoring_to_zk_node        = { from = "monitoring", to = "zookeeper", port = 9100, what = "Prometheus scrapes the node exporter" }
  }

  # Every instance reaches Debian mirrors (HTTP) and AWS APIs (HTTPS).
  outbound = {
    for pair in setproduct(["web", "worker", "mysql", "memcached", "redis", "zookeeper", "monitoring"], [80, 443]) :
    "${pair[0]}_out_${pair[1]}" => { tier = pair[0], port = pair[1] }
  }
}

resource "aws_security_group" "this" {
  #checkov:skip=CKV2_AWS_5:Attached in the tier modules (load balancer, launch templates, instances) through module outputs, which the check does not follow.
  for_each = local.tiers

  name        = "${var.name_prefix}-${each.key}"
  description = each.value
  vpc_id      = var.vpc_id

  tags = {
    Name = "${var.name_prefix}-${each.key}"
  }

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_vpc_security_group_ingress_rule" "flow" {
  #checkov:skip=CKV_AWS_260:Every flow admits one security group (referenced_security_group_id), never 0.0.0.0/0; the check does not read that argument.
  for_each = local.flows

  security_group_id            = aws_security_group.this[each.value.to].id
  referenced_security_group_id = aws_security_group.this[each.value.from].id
  ip_protocol                  = "tcp"
  from_port                    = each.value.port
  to_port                      = each.value.port
  description                  = each.value.what
}

resource "aws_vpc_security_group_egress_rule" "flow" {
  for_each = local.flows

  security_group_id            = aws_security_group.this[each.value.from].id
  referenced_security_group_id = aws_security_group.this[each.value.to].id
  ip_protocol                  = "tcp"
  from_port                    = each.value.port
  to_port                      = each.value.port
  description                  = each.value.what
}

resource "aws_vpc_security_group_egress_rule" "outbound" {
  for_each = local.outbound

  security_group_id = aws_security_group.this[each.value.tier].id
  cidr_ipv4         = "0.0.0.0/0"
  ip_protocol       = "tcp"
  from_port         = each.value.port
  to_port           = each.value.port
  description       = each.value.port == 443 ? "HTTPS to AWS APIs (S3, SSM) and package sources" : "HTTP to Debian package mirrors"
}

resource "aws_vpc_security_group_ingress_rule" "alb_https" {
  security_group_id = aws_security_group.this["alb"].id
  cidr_ipv4         = "0.0.0.0/0"
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
  description       = "HTTPS from the internet"
}

resource "aws_vpc_security_group_ingress_rule" "alb_http" {
  #checkov:skip=CKV_AWS_260:Port 80 only answers with a redirect to HTTPS (the listener never forwards).
  security_group_id = aws_security_group.this["alb"].id
  cidr_ipv4         = "0.0.0.0/0"
  ip_protocol       = "tcp"
  from_port         = 80
  to_port           = 80
  description       = "HTTP from the internet, redirected to HTTPS"
}

# Nothing in, nothing out. An empty list (not an absent block) makes Terraform
# remove any rule found on the group, the allow-all egress rule AWS adds to every
# new group included.
resource "aws_security_group" "fenced" {
  #checkov:skip=CKV2_AWS_5:Attached by pinboard-fence-mysql (an emergency failover's fence) to the shard host it fences, never by Terraform.
  name        = "${var.name_prefix}-mysql-fenced"
  description = "Fenced MySQL shard hosts: no traffic in or out"
  vpc_id      = var.vpc_id

  ingress = []
  egress  = []

  tags = {
    Name = "${var.name_prefix}-mysql-fenced"
  }
}
