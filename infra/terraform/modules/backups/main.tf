# The shard hosts' physical backups and the masters' archived binary logs
# (`shardstore backup`), under s3://<bucket>/<environment>/, encrypted with a key of
# their own. Every object version is locked when it is put: for retention_days nobody can
# delete or overwrite it, whatever credentials they hold. Shard hosts may only put; the
# workers, which archive, verify and restore, may put, read and list; no role may delete
# (see modules/iam).

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  account_id = data.aws_caller_identity.current.account_id

  # Restoring to a time needs the newest backup before it (a day older at most: one a
  # day) and the archive since. Two days past the lock, so every second of the retention
  # can be restored (lifecycle days also round to midnight UTC).
  expire_days = var.retention_days + 2

  # Who may still change what protects the backups; the instance roles never.
  administrators = concat(
    ["arn:${data.aws_partition.current.partition}:iam::${local.account_id}:root"],
    var.administrators,
  )
}

resource "aws_kms_key" "backups" {
  description             = "${var.name_prefix}: backups of the shard hosts and their binary logs"
  enable_key_rotation     = true
  deletion_window_in_days = 30

  # The account's IAM policies decide who may use the key (modules/iam): only
  # through S3, to put (the shard hosts, the workers) and to read (the workers).
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "AccountAdministersAndDelegatesToIam"
      Effect    = "Allow"
      Principal = { AWS = "arn:${data.aws_partition.current.partition}:iam::${local.account_id}:root" }
      Action    = "kms:*"
      Resource  = "*"
    }]
  })
}

resource "aws_kms_alias" "backups" {
  name          = "alias/${var.name_prefix}-backups"
  target_key_id = aws_kms_key.backups.key_id
}

resource "aws_s3_bucket" "this" {
  bucket = "${var.name_prefix}-backups-${local.account_id}"

  # Only at creation: an existing bucket cannot be given Object Lock by Terraform.
  object_lock_enabled = true
}

resource "aws_s3_bucket_ownership_controls" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_public_access_block" "this" {
  bucket                  = aws_s3_bucket.this.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    bucket_key_enabled = true

    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.backups.arn
    }
  }
}

# Object Lock needs it, and cannot be turned off with it.
resource "aws_s3_bucket_versioning" "this" {
  bucket = aws_s3_bucket.this.id

  versioning_configuration {
    status = "Enabled"
  }
}

# COMPLIANCE, not GOVERNANCE: a governance lock gives way to anyone allowed
# s3:BypassGovernanceRetention, which the account's administrators are: the very
# credentials whose theft or mistake the backups must outlive. A compliance lock gives way
# to no one, the root user included, so its length is kept short: retention_days.
resource "aws_s3_bucket_object_lock_configuration" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    default_retention {
      mode = "COMPLIANCE"
      days = var.retention_days
    }
  }

  depends_on = [aws_s3_bucket_versioning.this]
}

resource "aws_s3_bucket_logging" "this" {
  bucket        = aws_s3_bucket.this.id
  target_bucket = var.log_bucket_id
  target_prefix = "s3-access/backups/"
}

# What is older than the retention (and its margin) goes: a version overwritten (an open
# binary log put again as it grows) or expired goes a day after, once its lock has ended
# (S3 keeps a locked version whatever the lifecycle says).
resource "aws_s3_bucket_lifecycle_configuration" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    id     = "expire-after-retention"
    status = "Enabled"

    filter {}

    expiration {
      days = local.expire_days
    }

    noncurrent_version_expiration {
      noncurrent_days = 1
    }

    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }

  depends_on = [aws_s3_bucket_versioning.this]
}

data "aws_iam_policy_document" "bucket" {
  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [aws_s3_bucket.this.arn, "${aws_s3_bucket.this.arn}/*"]

    principals {
      type        = "*"
      identifiers = ["*"]
    }

    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }

  # Whatever an IAM policy allows: no delete (not even a delete marker, which would hide
  # a backup from a restore), and no change to the lock, the lifecycle or this policy
  # but by the administrators. The lifecycle's own expirations are not requests: they
  # are never denied.
  statement {
    sid    = "DenyDeletesAndProtectionChanges"
    effect = "Deny"
    actions = [
      "s3:DeleteObject",
      "s3:DeleteObjectVersion",
      "s3:PutBucketObjectLockConfiguration",
      "s3:PutLifecycleConfiguration",
      "s3:PutBucketPolicy",
      "s3:DeleteBucketPolicy",
    ]
    resources = [aws_s3_bucket.this.arn, "${aws_s3_bucket.this.arn}/*"]

    principals {
      type        = "*"
      identifiers = ["*"]
    }

    condition {
      test     = "ArnNotLike"
      variable = "aws:PrincipalArn"
      values   = local.administrators
    }
  }
}

# Last: once it is in place, only the administrators may set the lock and the lifecycle.
resource "aws_s3_bucket_policy" "this" {
  bucket = aws_s3_bucket.this.id
  policy = data.aws_iam_policy_document.bucket.json

  depends_on = [
    aws_s3_bucket_public_access_block.this,
    aws_s3_bucket_object_lock_configuration.this,
    aws_s3_bucket_lifecycle_configuration.this,
  ]
}
