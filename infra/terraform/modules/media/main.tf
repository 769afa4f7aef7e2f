# Uploaded images in a private, KMS-encrypted, versioned bucket, served only
# through CloudFront (origin access control); and the artifacts bucket that
# instances bootstrap from (s3://<artifacts>/<environment>/puppet.tar.gz,
# deploy.yaml). Only the web role uploads images; workers move and delete them
# (see modules/iam).

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  account_id = data.aws_caller_identity.current.account_id

  buckets = {
    media     = "${var.name_prefix}-media-${local.account_id}"
    artifacts = "${var.name_prefix}-artifacts-${local.account_id}"
  }
}

resource "aws_kms_key" "s3" {
  description             = "${var.name_prefix}: images and release artifacts in S3"
  enable_key_rotation     = true
  deletion_window_in_days = 30

  # In a key policy "*" means this key. The account's IAM policies grant the
  # instance roles their use of it (modules/iam); CloudFront may decrypt for
  # this distribution only.
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "AccountAdministersAndDelegatesToIam"
        Effect    = "Allow"
        Principal = { AWS = "arn:${data.aws_partition.current.partition}:iam::${local.account_id}:root" }
        Action    = "kms:*"
        Resource  = "*"
      },
      {
        Sid       = "CloudFrontReadsImages"
        Effect    = "Allow"
        Principal = { Service = "cloudfront.amazonaws.com" }
        Action    = "kms:Decrypt"
        Resource  = "*"
        Condition = { StringEquals = { "aws:SourceArn" = aws_cloudfront_distribution.media.arn } }
      },
    ]
  })
}

resource "aws_kms_alias" "s3" {
  name          = "alias/${var.name_prefix}-s3"
  target_key_id = aws_kms_key.s3.key_id
}

resource "aws_s3_bucket" "this" {
  for_each = local.buckets

  bucket = each.value
}

resource "aws_s3_bucket_ownership_controls" "this" {
  for_each = aws_s3_bucket.this

  bucket = each.value.id

  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_public_access_block" "this" {
  for_each = aws_s3_bucket.this

  bucket                  = each.value.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  for_each = aws_s3_bucket.this

  bucket = each.value.id

  rule {
    bucket_key_enabled = true

    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.s3.arn
    }
  }
}

resource "aws_s3_bucket_versioning" "this" {
  for_each = aws_s3_bucket.this

  bucket = each.value.id

  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_logging" "this" {
  for_each = aws_s3_bucket.this

  bucket        = each.value.id
  target_bucket = var.log_bucket_id
  target_prefix = "s3-access/${each.key}/"
}

resource "aws_s3_bucket_lifecycle_configuration" "this" {
  for_each = aws_s3_bucket.this

  bucket = each.value.id

  rule {
    id     = "expire-old-versions"
    status = "Enabled"

    filter {}

    noncurrent_version_expiration {
      noncurrent_days = var.noncurrent_days
    }

    abort_incomplete_multipart_upload {
      days_after_initiation = 7
    }
  }

  depends_on = [aws_s3_bucket_versioning.this]
}

data "aws_iam_policy_document" "bucket" {
  for_each = aws_s3_bucket.this

  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [each.value.arn, "${each.value.arn}/*"]

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

  dynamic "statement" {
    for_each = each.key == "media" ? [1] : []

    content {
      sid     = "CloudFrontReadsImages"
      actions = ["s3:GetObject"]
      # Public images only: a secret board's pins' files (private/) are read through URLs
      # the site signs for minutes, never through the media domain.
      resources = ["${each.value.arn}/pins/*", "${each.value.arn}/avatars/*"]

      principals {
        type        = "Service"
        identifiers = ["cloudfront.amazonaws.com"]
      }

      condition {
        test     = "StringEquals"
        variable = "aws:SourceArn"
        values   = [aws_cloudfront_distribution.media.arn]
      }
    }
  }
}

resource "aws_s3_bucket_policy" "this" {
  for_each = aws_s3_bucket.this

  bucket = each.value.id
  policy = data.aws_iam_policy_document.bucket[each.key].json

  depends_on = [aws_s3_bucket_public_access_block.this]
}

resource "aws_cloudfront_origin_access_control" "media" {
  name                              = "${var.name_prefix}-media"
  description                       = "CloudFront signs its requests for images"
  origin_access_control_origin_type = "s3"
  signing_behavior                  = "always"
  signing_protocol                  = "sigv4"
}

resource "aws_cloudfront_response_headers_policy" "media" {
  name    = "${var.name_prefix}-media"
  comment = "Security headers on every image"

  security_headers_config {
    content_type_options {
      override = true
    }

    frame_options {
      frame_option = "DENY"
      override     = true
    }

    referrer_policy {
      referrer_policy = "strict-origin-when-cross-origin"
      override        = true
    }

    strict_transport_security {
      access_control_max_age_sec = 31536000
      include_subdomains         = true
      preload                    = true
      override                   = true
    }
  }
}

# Images at the edge for 5 minutes at most, whatever a file's Cache-Control asks (those
# stored before asked a year): a file the site deletes (a pin deleted, a board made
# secret, an avatar replaced, an account deleted) stops answering within the life of a
# signed URL, with no invalidation to send, pay for or lose (docs/deploy.md, "Images on
# S3 and CloudFront"). An expired image is asked of S3 again with its ETag: a 304 while
# it is there.
resource "aws_cloudfront_cache_policy" "media" {
  name        = "${var.name_prefix}-media"
  comment     = "Images: 5 minutes at the edge at most"
  min_ttl     = 0
  default_ttl = 300
  max_ttl     = 300

  parameters_in_cache_key_and_forwarded_to_origin {
    enable_accept_encoding_brotli = true
    enable_accept_encoding_gzip   = true

    cookies_config {
      cookie_behavior = "none"
    }

    headers_config {
      header_behavior = "none"
    }

    query_strings_config {
      query_string_behavior = "none"
    }
  }
}

resource "aws_cloudfront_distribution" "media" {
  #checkov:skip=CKV_AWS_174:The distribution uses its cloudfront.net name and certificate (TLS 1.2 needs a custom certificate).
  #checkov:skip=CKV2_AWS_42:Images are served from the cloudfront.net name (media_domain), no custom certificate.
  #checkov:skip=CKV_AWS_305:No root object: the distribution serves images by key only.
  enabled         = true
  comment         = "${var.name_prefix} images"
  is_ipv6_enabled = true
  http_version    = "http2and3"
  price_class     = "PriceClass_100"

  origin {
    origin_id                = "media"
    domain_name              = aws_s3_bucket.this["media"].bucket_regional_domain_name
    origin_access_control_id = aws_cloudfront_origin_access_control.media.id
  }

  default_cache_behavior {
    target_origin_id           = "media"
    viewer_protocol_policy     = "redirect-to-https"
    allowed_methods            = ["GET", "HEAD"]
    cached_methods             = ["GET", "HEAD"]
    compress                   = true
    cache_policy_id            = aws_cloudfront_cache_policy.media.id
    response_headers_policy_id = aws_cloudfront_response_headers_policy.media.id
  }

  logging_config {
    bucket          = var.log_bucket_domain
    prefix          = "cloudfront/"
    include_cookies = false
  }

  restrictions {
    geo_restriction {
      restriction_type = "none"
    }
  }

  viewer_certificate {
    cloudfront_default_certificate = true
  }
}
