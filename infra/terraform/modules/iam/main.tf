# Instance roles, least privilege. Every host: Session Manager (no SSH), its
# environment's artifacts, and only the SSM parameters it needs. Only web
# hosts upload images; workers move them between private/ and the public prefixes and
# delete those no pin or pinner shows any more.
#
#   web     images (write), artifacts, the site's parameters (secret key,
#           MySQL and control database logins): never the operators' password;
#           not the backups
#   worker  artifacts, every parameter and the control database's master
#           secret (operators run their commands there); the fence: moving this
#           environment's shard hosts (Role mysql_shard) into the fenced
#           security group and stopping them; the backups: put, read and list
#           (the binary-log archiver, verifications, restores)
#   mysql   artifacts, the passwords of its accounts (site, admin, replication, and the
#           metrics exporter's); the backups: put its own, nothing else (no read,
#           no list, no delete)
#   data    artifacts only (memcached, Redis, broker, ZooKeeper)
#   monitoring  artifacts (the release's rules) and describing instances: Prometheus
#           finds its targets through EC2's API

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

data "aws_region" "current" {}

locals {
  parameter_arn = "arn:${data.aws_partition.current.partition}:ssm:${data.aws_region.current.id}:${data.aws_caller_identity.current.account_id}:parameter${var.ssm_prefix}"

  parameters = {
    web = [
      for name in ["secret_key", "mysql_app_password", "control_db_password"] :
      "${local.parameter_arn}${name}"
    ]
    worker = ["${local.parameter_arn}*"]
    mysql = [
      for name in ["mysql_app_password", "mysql_admin_password", "mysql_replication_password", "mysql_exporter_password"] :
      "${local.parameter_arn}${name}"
    ]
    data       = []
    monitoring = []
  }

  s3_via = "s3.${data.aws_region.current.id}.amazonaws.com"

  # The hosts that may read the control database's master secret: the site itself logs
  # in as its own user (control_db_password), operators set that user up from a worker.
  control_db_readers = ["worker"]

  # The hosts that fence a shard master before an emergency failover (operators' hosts).
  fencers = ["worker"]

  # The hosts that find their scrape targets through EC2's API (Prometheus).
  scrapers = ["monitoring"]

  # The backup store, s3://<backups>/<environment>/ (modules/backups): the shard hosts put
  # their backups (the pinboard-backup timer); the workers also read and list it (the
  # binary-log archiver, backup verify, restore, restore-shard). Nobody deletes: the
  # lifecycle does, once the lock has ended.
  backup_writers = ["mysql", "worker"]
  backup_readers = ["worker"]

  instance_arns = "arn:${data.aws_partition.current.partition}:ec2:${data.aws_region.current.id}:${data.aws_caller_identity.current.account_id}:instance/*"
}

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["ec2.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "this" {
  for_each = local.parameters

  name               = "${var.name_prefix}-${each.key}"
  description        = "${var.name_prefix} ${each.key} instances"
  assume_role_policy = data.aws_iam_policy_document.assume.json
}

resource "aws_iam_role_policy_attachment" "ssm_core" {
  for_each = aws_iam_role.this

  role       = each.value.name
  policy_arn = "arn:${data.aws_partition.current.partition}:iam::aws:policy/AmazonSSMManagedInstanceCore"
}

data "aws_iam_policy_document" "this" {
  for_each = local.parameters

  statement {
    sid       = "ReadArtifacts"
    actions   = ["s3:GetObject"]
    resources = ["${var.artifacts_bucket_arn}/${var.environment}/*"]
  }

  statement {
    sid       = "DecryptS3Objects"
    actions   = ["kms:Decrypt"]
    resources = [var.s3_kms_key_arn]

    condition {
      test     = "StringEquals"
      variable = "kms:ViaService"
      values   = [local.s3_via]
    }
  }

  dynamic "statement" {
    for_each = length(each.value) > 0 ? [1] : []

    content {
      sid       = "ReadParameters"
      actions   = ["ssm:GetParameter", "ssm:GetParameters"]
      resources = each.value
    }
  }

  # Uploads, under the prefixes the site names files with (pinboard/image_files.py), and
  # the deletes that undo one cut short (image_files.save_all). Each file is one
  # conditional PutObject: no role may list the bucket, so asking S3 whether a name is taken
  # would be answered 403 (pinboard/s3_images.py).
  dynamic "statement" {
    for_each = each.key == "web" ? [1] : []

    content {
      sid     = "WriteImages"
      actions = ["s3:PutObject", "s3:DeleteObject"]
      resources = [
        "${var.media_bucket_arn}/pins/*",
        "${var.media_bucket_arn}/avatars/*",
        "${var.media_bucket_arn}/private/*",
      ]
    }
  }

  # A secret board's pins' files: the web tier signs short-lived URLs to them (the signer
  # must be allowed to read them), and the workers move files between private/ and the
  # public prefixes when a board's secrecy changes (boards.tasks).
  dynamic "statement" {
    for_each = contains(["web", "worker"], each.key) ? [1] : []

    content {
      sid       = "ReadPrivateImages"
      actions   = ["s3:GetObject"]
      resources = ["${var.media_bucket_arn}/private/*"]
    }
  }

  dynamic "statement" {
    for_each = each.key == "worker" ? [1] : []

    content {
      sid       = "MoveImages"
      actions   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"]
      resources = ["${var.media_bucket_arn}/pins/*", "${var.media_bucket_arn}/private/*"]
    }
  }

  # A replaced avatar's files, and a deleted account's (users.tasks).
  dynamic "statement" {
    for_each = each.key == "worker" ? [1] : []

    content {
      sid       = "DeleteAvatars"
      actions   = ["s3:DeleteObject"]
      resources = ["${var.media_bucket_arn}/avatars/*"]
    }
  }

  dynamic "statement" {
    for_each = each.key == "worker" ? [1] : []

    content {
      sid       = "EncryptMovedImages"
      actions   = ["kms:GenerateDataKey"]
      resources = [var.s3_kms_key_arn]

      condition {
        test     = "StringEquals"
        variable = "kms:ViaService"
        values   = [local.s3_via]
      }
    }
  }

  dynamic "statement" {
    for_each = each.key == "web" ? [1] : []

    content {
      sid       = "EncryptImages"
      actions   = ["kms:GenerateDataKey"]
      resources = [var.s3_kms_key_arn]

      condition {
        test     = "StringEquals"
        variable = "kms:ViaService"
        values   = [local.s3_via]
      }
    }
  }

  dynamic "statement" {
    for_each = contains(local.control_db_readers, each.key) ? [1] : []

    content {
      sid       = "ReadControlDatabaseSecret"
      actions   = ["secretsmanager:GetSecretValue"]
      resources = [var.control_db_secret_arn]
    }
  }

  # The secret's own key, only through Secrets Manager and only for that secret.
  dynamic "statement" {
    for_each = contains(local.control_db_readers, each.key) ? [1] : []

    content {
      sid       = "DecryptControlDatabaseSecret"
      actions   = ["kms:Decrypt"]
      resources = [var.control_db_secret_kms_key_arn]

      condition {
        test     = "StringEquals"
        variable = "kms:ViaService"
        values   = ["secretsmanager.${data.aws_region.current.id}.amazonaws.com"]
      }

      condition {
        test     = "StringEquals"
        variable = "kms:EncryptionContext:SecretARN"
        values   = [var.control_db_secret_arn]
      }
    }
  }

  # The fence (pinboard-fence-mysql): find a shard host by its address, swap its security
  # groups for the fenced group, stop it. DescribeInstances takes no resource but "*".
  dynamic "statement" {
    for_each = contains(local.fencers, each.key) ? [1] : []

    content {
      sid       = "FenceFindShardHosts"
      actions   = ["ec2:DescribeInstances"]
      resources = ["*"]
    }
  }

  # Only this environment's shard hosts (the Role tag of modules/mysql, the Environment
  # tag of the provider's default_tags)...
  dynamic "statement" {
    for_each = contains(local.fencers, each.key) ? [1] : []

    content {
      sid       = "FenceShardHosts"
      actions   = ["ec2:ModifyInstanceAttribute", "ec2:StopInstances"]
      resources = [local.instance_arns]

      condition {
        test     = "StringEquals"
        variable = "aws:ResourceTag/Role"
        values   = ["mysql_shard"]
      }

      condition {
        test     = "StringEquals"
        variable = "aws:ResourceTag/Environment"
        values   = [var.environment]
      }
    }
  }

  # ...and into the fenced group only: changing an instance's groups is also authorized
  # against each group it is given.
  dynamic "statement" {
    for_each = contains(local.fencers, each.key) ? [1] : []

    content {
      sid       = "FenceIntoTheFencedGroup"
      actions   = ["ec2:ModifyInstanceAttribute"]
      resources = [var.fenced_security_group_arn]
    }
  }

  # Prometheus's EC2 discovery (ec2_sd_configs): reads only, and DescribeInstances takes
  # no resource but "*".
  dynamic "statement" {
    for_each = contains(local.scrapers, each.key) ? [1] : []

    content {
      sid       = "DiscoverScrapeTargets"
      actions   = ["ec2:DescribeInstances"]
      resources = ["*"]
    }
  }
}

resource "aws_iam_role_policy" "this" {
  for_each = aws_iam_role.this

  name   = "${var.name_prefix}-${each.key}"
  role   = each.value.id
  policy = data.aws_iam_policy_document.this[each.key].json
}

# The backup grants, in a policy of their own on each role that uses the store.
data "aws_iam_policy_document" "backups" {
  for_each = toset(local.backup_writers)

  statement {
    sid       = "PutBackups"
    actions   = ["s3:PutObject"]
    resources = ["${var.backups_bucket_arn}/${var.environment}/*"]
  }

  # Each put is encrypted with the backups' key; a multipart one (a part of a backup is
  # 64 MB) needs Decrypt too, for S3 to join its parts. Through S3 only: Decrypt gives
  # no role an object S3 does not let it get.
  statement {
    sid       = "EncryptBackups"
    actions   = ["kms:GenerateDataKey", "kms:Decrypt"]
    resources = [var.backups_kms_key_arn]

    condition {
      test     = "StringEquals"
      variable = "kms:ViaService"
      values   = [local.s3_via]
    }
  }

  dynamic "statement" {
    for_each = contains(local.backup_readers, each.key) ? [1] : []

    content {
      sid       = "ReadBackups"
      actions   = ["s3:GetObject"]
      resources = ["${var.backups_bucket_arn}/${var.environment}/*"]
    }
  }

  dynamic "statement" {
    for_each = contains(local.backup_readers, each.key) ? [1] : []

    content {
      sid       = "ListBackups"
      actions   = ["s3:ListBucket"]
      resources = [var.backups_bucket_arn]

      condition {
        test     = "StringLike"
        variable = "s3:prefix"
        values   = ["${var.environment}/*"]
      }
    }
  }
}

resource "aws_iam_role_policy" "backups" {
  for_each = data.aws_iam_policy_document.backups

  name   = "${var.name_prefix}-${each.key}-backups"
  role   = aws_iam_role.this[each.key].id
  policy = each.value.json
}

resource "aws_iam_instance_profile" "this" {
  for_each = aws_iam_role.this

  name = each.value.name
  role = each.value.name
}
