# A tier of interchangeable hosts (web, worker): a launch template booting the
# shared cloud-init document, and an autoscaling group in the private subnets
# that rolls its hosts whenever the template changes.

module "user_data" {
  source = "../user_data"

  role             = var.role
  environment      = var.bootstrap.environment
  region           = var.bootstrap.region
  artifacts_bucket = var.bootstrap.artifacts_bucket
}

resource "aws_launch_template" "this" {
  name_prefix            = "${var.name}-"
  image_id               = var.bootstrap.ami_id
  instance_type          = var.instance_type
  vpc_security_group_ids = [var.security_group]
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
      volume_size           = var.root_volume_size
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
      Role        = var.role
    }
  }

  tag_specifications {
    resource_type = "volume"

    tags = {
      Project     = "pinboard"
      Environment = var.bootstrap.environment
      Role        = var.role
    }
  }
}

resource "aws_autoscaling_group" "this" {
  name                = var.name
  vpc_zone_identifier = var.private_subnet_ids
  min_size            = var.min_size
  max_size            = var.max_size
  desired_capacity    = var.desired_capacity
  target_group_arns   = var.target_group_arns
  # Behind a load balancer, a host that fails its health check is replaced too.
  health_check_type         = length(var.target_group_arns) > 0 ? "ELB" : "EC2"
  health_check_grace_period = 600

  launch_template {
    id      = aws_launch_template.this.id
    version = aws_launch_template.this.latest_version
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
    value               = var.name
    propagate_at_launch = true
  }
}
