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

  health_check {
    path                = "/healthz"
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

module "user_data" {
  source = "../user_data"

  role             = "web"
  environment      = var.bootstrap.environment
  region           = var.bootstrap.region
  artifacts_bucket = var.bootstrap.artifacts_bucket
}

resource "aws_launch_template" "web" {
  name_prefix            = "${var.name_prefix}-web-"
  image_id               = var.bootstrap.ami_id
  instance_type          = var.instance_type
  vpc_security_group_ids = [var.web_security_group]
  user_data              = base64encode(module.user_data.cloud_config)
  ebs_optimized          = true

  iam_instance_profile {
    name = var.instance_profile
  }

  metadata_options {
    http_endpoint               = "enabled"
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }

  monitoring {
    enabled = true
  }

  block_device_mappings {
    device_name = "/dev/xvda"

    ebs {
      volume_type           = "gp3"
      volume_size           = 20
      encrypted             = true
      delete_on_termination = true
    }
  }

  # default_tags do not reach instances an autoscaling group launches.
  tag_specifications {
    resource_type = "instance"

    tags = {
      Project     = "pinboard"
      Environment = var.bootstrap.environment
      Role        = "web"
    }
  }

  tag_specifications {
    resource_type = "volume"

    tags = {
      Project     = "pinboard"
      Environment = var.bootstrap.environment
      Role        = "web"
    }
  }
}

resource "aws_autoscaling_group" "web" {
  name                      = "${var.name_prefix}-web"
  vpc_zone_identifier       = var.private_subnet_ids
  min_size                  = var.min_size
  max_size                  = var.max_size
  desired_capacity          = var.desired_capacity
  target_group_arns         = [aws_lb_target_group.web.arn]
  health_check_type         = "ELB"
  health_check_grace_period = 600

  launch_template {
    id      = aws_launch_template.web.id
    version = aws_launch_template.web.latest_version
  }

  # A new launch template version (new AMI, new bootstrap) rolls the hosts.
  instance_refresh {
    strategy = "Rolling"

    preferences {
      min_healthy_percentage = 50
    }
  }

  tag {
    key                 = "Name"
    value               = "${var.name_prefix}-web"
    propagate_at_launch = true
  }
}
