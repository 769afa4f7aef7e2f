# One named, long-lived instance (mysql001a, redis001b, zk2, ...): tagged per
# the deploy contract, configured by the shared cloud-init document, with an
# optional encrypted EBS data volume formatted and mounted before Puppet runs.

data "aws_subnet" "this" {
  id = var.subnet_id
}

locals {
  # EBS volumes show up as NVMe devices whose serial is the volume ID
  # without its dash; the script waits for the attachment.
  mount_data_volume = var.data_volume == null ? "" : templatefile("${path.module}/mount-data-volume.sh.tftpl", {
    volume_serial = replace(aws_ebs_volume.data[0].id, "-", "")
    mount_point   = var.data_volume.mount_point
  })

  pre_puppet = join("\n", compact([local.mount_data_volume, var.pre_puppet]))
}

module "user_data" {
  source = "../user_data"

  role             = coalesce(var.puppet_role, var.role)
  environment      = var.bootstrap.environment
  region           = var.bootstrap.region
  artifacts_bucket = var.bootstrap.artifacts_bucket
  host_name        = var.name
  # Joined into one script: the second shebang line is only a comment there.
  pre_puppet     = local.pre_puppet
  extra_packages = concat(var.data_volume == null ? [] : ["xfsprogs"], var.extra_packages)
}

resource "aws_ebs_volume" "data" {
  count = var.data_volume == null ? 0 : 1

  availability_zone = data.aws_subnet.this.availability_zone
  size              = var.data_volume.size
  type              = "gp3"
  encrypted         = true
  kms_key_id        = var.bootstrap.ebs_kms_key_arn

  tags = {
    Name = "${var.name}-data"
    Role = var.role
  }
}

resource "aws_instance" "this" {
  ami                    = var.bootstrap.ami_id
  instance_type          = var.instance_type
  subnet_id              = var.subnet_id
  vpc_security_group_ids = var.security_group_ids
  iam_instance_profile   = var.instance_profile
  user_data              = module.user_data.cloud_config
  ebs_optimized          = true
  monitoring             = true

  metadata_options {
    http_endpoint               = "enabled"
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }

  root_block_device {
    volume_type = "gp3"
    volume_size = var.root_volume_size
    encrypted   = true
    kms_key_id  = var.bootstrap.ebs_kms_key_arn
  }

  tags = {
    Name = var.name
    Role = var.role
  }

  volume_tags = {
    Name = var.name
    Role = var.role
  }

  lifecycle {
    # A newer Debian AMI or a changed bootstrap script must not replace a
    # data host: hosts are replaced one at a time, on purpose (docs/deploy.md).
    ignore_changes = [ami, user_data]
  }
}

resource "aws_volume_attachment" "data" {
  count = var.data_volume == null ? 0 : 1

  device_name = "/dev/sdf"
  volume_id   = aws_ebs_volume.data[0].id
  instance_id = aws_instance.this.id
}
