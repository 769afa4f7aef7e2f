# The control database (staff accounts, config journal, long jobs), shared by
# every web and worker host: RDS MariaDB 10.11, Multi-AZ, in the private
# subnets. RDS generates the master password and keeps it in Secrets Manager
# ({"username", "password"}), so it is in neither the repository nor the
# Terraform state. Connections must use TLS (require_secure_transport).

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

data "aws_region" "current" {}

locals {
  identifier = "${var.name_prefix}-control"
  account    = data.aws_caller_identity.current.account_id
  partition  = data.aws_partition.current.partition

  # Exported to CloudWatch: who connected and what changed the schema or the
  # grants (audit), server errors, and queries slower than a second.
  logs = ["audit", "error", "slowquery"]

  # Performance Insights does not run on the smallest classes: enabling it
  # there fails the apply. (Spelled "== false": checkov misreads "!contains"
  # as false and fails CKV_AWS_353; this form it leaves undecided.)
  no_insights = ["db.t2.micro", "db.t2.small", "db.t3.micro", "db.t3.small", "db.t4g.micro", "db.t4g.small"]
  insights    = contains(local.no_insights, var.instance_class) == false

  account_root = { AWS = "arn:${local.partition}:iam::${local.account}:root" }
}

# Encrypts the storage, its snapshots and backups, Performance Insights and
# the exported logs.
resource "aws_kms_key" "data" {
  description             = "${local.identifier}: storage, backups, Performance Insights, logs"
  enable_key_rotation     = true
  deletion_window_in_days = 30

  # The account's IAM policies decide who may use the key; CloudWatch Logs
  # may use it for this database's log groups only.
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "AccountAdministersAndDelegatesToIam"
        Effect    = "Allow"
        Principal = local.account_root
        Action    = "kms:*"
        Resource  = "*"
      },
      {
        Sid       = "CloudWatchLogsEncryptsTheDatabaseLogs"
        Effect    = "Allow"
        Principal = { Service = "logs.${data.aws_region.current.id}.amazonaws.com" }
        Action    = ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"]
        Resource  = "*"
        Condition = {
          ArnLike = {
            "kms:EncryptionContext:aws:logs:arn" = "arn:${local.partition}:logs:${data.aws_region.current.id}:${local.account}:log-group:/aws/rds/instance/${local.identifier}/*"
          }
        }
      },
    ]
  })
}

resource "aws_kms_alias" "data" {
  name          = "alias/${local.identifier}"
  target_key_id = aws_kms_key.data.key_id
}

# Encrypts the master user secret only: web and worker hosts may decrypt
# with it, through Secrets Manager, and with no other key of the database.
resource "aws_kms_key" "secret" {
  description             = "${local.identifier}: the master user secret"
  enable_key_rotation     = true
  deletion_window_in_days = 30

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "AccountAdministersAndDelegatesToIam"
      Effect    = "Allow"
      Principal = local.account_root
      Action    = "kms:*"
      Resource  = "*"
    }]
  })
}

resource "aws_kms_alias" "secret" {
  name          = "alias/${local.identifier}-secret"
  target_key_id = aws_kms_key.secret.key_id
}

resource "aws_db_subnet_group" "this" {
  name        = local.identifier
  description = "${local.identifier}: the private subnets"
  subnet_ids  = var.private_subnet_ids
}

resource "aws_db_parameter_group" "this" {
  name        = local.identifier
  description = "${local.identifier}: TLS only, utf8mb4, slow query log"
  family      = "mariadb10.11"

  parameter {
    name  = "require_secure_transport"
    value = "1"
  }

  # MariaDB's default is latin1; the site connects with utf8mb4 and the
  # tables it creates take the server's default.
  parameter {
    name         = "character_set_server"
    value        = "utf8mb4"
    apply_method = "pending-reboot"
  }

  parameter {
    name         = "collation_server"
    value        = "utf8mb4_unicode_ci"
    apply_method = "pending-reboot"
  }

  parameter {
    name  = "slow_query_log"
    value = "1"
  }

  parameter {
    name  = "long_query_time"
    value = "1"
  }

  # The log exports read files, not the mysql.*_log tables.
  parameter {
    name  = "log_output"
    value = "FILE"
  }

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_db_option_group" "this" {
  name                     = local.identifier
  option_group_description = "${local.identifier}: audit plugin (connections, DDL, grants)"
  engine_name              = "mariadb"
  major_engine_version     = "10.11"

  option {
    option_name = "MARIADB_AUDIT_PLUGIN"

    option_settings {
      name  = "SERVER_AUDIT_EVENTS"
      value = "CONNECT,QUERY_DDL,QUERY_DCL"
    }
  }

  lifecycle {
    create_before_destroy = true
  }
}

# Created here, before the database, so they have a retention period and the
# key; RDS would otherwise create them unencrypted, kept forever.
resource "aws_cloudwatch_log_group" "this" {
  for_each = toset(local.logs)

  name              = "/aws/rds/instance/${local.identifier}/${each.key}"
  retention_in_days = var.log_retention_days
  kms_key_id        = aws_kms_key.data.arn
}

data "aws_iam_policy_document" "monitoring_assume" {
  statement {
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["monitoring.rds.amazonaws.com"]
    }
  }
}

# Enhanced monitoring: RDS publishes OS metrics with this role.
resource "aws_iam_role" "monitoring" {
  name               = "${local.identifier}-monitoring"
  description        = "${local.identifier}: RDS enhanced monitoring"
  assume_role_policy = data.aws_iam_policy_document.monitoring_assume.json
}

resource "aws_iam_role_policy_attachment" "monitoring" {
  role       = aws_iam_role.monitoring.name
  policy_arn = "arn:${local.partition}:iam::aws:policy/service-role/AmazonRDSEnhancedMonitoringRole"
}

resource "aws_db_instance" "this" {
  identifier     = local.identifier
  engine         = "mariadb"
  engine_version = "10.11" # the newest 10.11 release; minor upgrades in the maintenance window
  instance_class = var.instance_class
  db_name        = "pinboard_control"
  port           = 3306

  username                      = "pinboard"
  manage_master_user_password   = true
  master_user_secret_kms_key_id = aws_kms_key.secret.arn

  multi_az               = true
  db_subnet_group_name   = aws_db_subnet_group.this.name
  vpc_security_group_ids = [var.security_group]
  publicly_accessible    = false
  parameter_group_name   = aws_db_parameter_group.this.name
  option_group_name      = aws_db_option_group.this.name
  ca_cert_identifier     = "rds-ca-rsa2048-g1"

  storage_type          = "gp3"
  allocated_storage     = 20
  max_allocated_storage = 200
  storage_encrypted     = true
  kms_key_id            = aws_kms_key.data.arn

  iam_database_authentication_enabled = true

  backup_retention_period   = var.backup_retention_days
  copy_tags_to_snapshot     = true
  deletion_protection       = var.deletion_protection
  skip_final_snapshot       = false
  final_snapshot_identifier = "${local.identifier}-final"

  auto_minor_version_upgrade = true
  apply_immediately          = false

  enabled_cloudwatch_logs_exports = local.logs
  monitoring_interval             = 60
  monitoring_role_arn             = aws_iam_role.monitoring.arn

  performance_insights_enabled          = local.insights
  performance_insights_kms_key_id       = local.insights ? aws_kms_key.data.arn : null
  performance_insights_retention_period = local.insights ? 7 : null

  depends_on = [aws_cloudwatch_log_group.this, aws_iam_role_policy_attachment.monitoring]
}
