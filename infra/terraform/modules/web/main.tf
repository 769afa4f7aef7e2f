# The public entry: an ALB in the public subnets terminating TLS with an ACM
# certificate (validated in the Route53 zone), redirecting HTTP to HTTPS, in
# front of an autoscaling group of web hosts (nginx on port 80, gunicorn
# behind it) in the private subnets.

resource "aws_acm_certificate" "site" {
  domain_name       = var.domain_name
  validation_method = "DNS"

  options {
    certificate_transparency_logging_preference = "ENABLED"
  }

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_route53_record" "validation" {
  for_each = {
    for option in aws_acm_certificate.site.domain_validation_options : option.domain_name => option
  }

  zone_id         = var.route53_zone_id
  name            = each.value.resource_record_name
  type            = each.value.resource_record_type
  records         = [each.value.resource_record_value]
  ttl             = 300
  allow_overwrite = true
}

resource "aws_acm_certificate_validation" "site" {
  certificate_arn         = aws_acm_certificate.site.arn
  validation_record_fqdns = [for record in aws_route53_record.validation : record.fqdn]
}

resource "aws_lb" "this" {
  name                       = "${var.name_prefix}-web"
  load_balancer_type         = "application"
  internal                   = false
  subnets                    = var.public_subnet_ids
  security_groups            = [var.alb_security_group]
  drop_invalid_header_fields = true
  enable_deletion_protection = var.deletion_protection

  access_logs {
    bucket  = var.log_bucket_id
    prefix  = "alb"
    enabled = true
  }
}

resource "aws_lb_target_group" "web" {
  #checkov:skip=CKV_AWS_378:TLS ends at the load balancer; nginx listens on port 80 inside the private subnets.
  name                 = "${var.name_prefix}-web"
  vpc_id               = var.vpc_id
  port                 = 80
  protocol             = "HTTP"
  deregistration_delay = 30

  # /readyz is 200 only while the instance's processes serve a valid shard map and reach
  # their MySQL hosts (else 503 with a reason): an instance cut off from its shards leaves
  # the rotation after three failed checks. /healthz (process up) is not a readiness check.
  health_check {
    path                = "/readyz"
    matcher             = "200"
    interval            = 15
    healthy_threshold   = 2
    unhealthy_threshold = 3
  }
}

resource "aws_lb_listener" "https" {
  load_balancer_arn = aws_lb.this.arn
  port              = 443
  protocol          = "HTTPS"
  ssl_policy        = "ELBSecurityPolicy-TLS13-1-2-2021-06"
  certificate_arn   = aws_acm_certificate_validation.site.certificate_arn

  default_action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.web.arn
  }
}

# Readiness (/readyz: ready or not and why, and the config versions each instance serves)
# is the health check's alone: the load balancer answers it from the internet with a 404
# of its own, as the site answers a path it does not have. The rule matches the path as
# sent; another spelling (/read%79z) reaches the site, which answers a 404 to any request
# carrying X-Forwarded-For (the health check's own carries none: pinboard/ops/health.py).
resource "aws_lb_listener_rule" "readiness_is_internal" {
  listener_arn = aws_lb_listener.https.arn
  priority     = 1

  condition {
    path_pattern {
      values = ["/readyz", "/readyz/*"]
    }
  }

  action {
    type = "fixed-response"

    fixed_response {
      content_type = "text/plain"
      message_body = "Not Found"
      status_code  = "404"
    }
  }
}

resource "aws_lb_listener" "http" {
  load_balancer_arn = aws_lb.this.arn
  port              = 80
  protocol          = "HTTP"

  default_action {
    type = "redirect"

    redirect {
      port        = "443"
      protocol    = "HTTPS"
      status_code = "HTTP_301"
    }
  }
}

resource "aws_route53_record" "site" {
  zone_id = var.route53_zone_id
  name    = var.domain_name
  type    = "A"

  alias {
    name                   = aws_lb.this.dns_name
    zone_id                = aws_lb.this.zone_id
    evaluate_target_health = true
  }
}

module "hosts" {
  source = "../autoscaled"

  name               = "${var.name_prefix}-web"
  role               = "web"
  bootstrap          = var.bootstrap
  private_subnet_ids = var.private_subnet_ids
  security_group     = var.web_security_group
  instance_profile   = var.instance_profile
  instance_type      = var.instance_type
  min_size           = var.min_size
  max_size           = var.max_size
  desired_capacity   = var.desired_capacity
  target_group_arns  = [aws_lb_target_group.web.arn]
}
