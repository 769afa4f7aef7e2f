data "aws_ami" "debian" {
  count = var.ami_id == null ? 1 : 0

  most_recent = true
  owners      = ["136693071363"] # Debian's official AMI publisher

  filter {
    name   = "name"
    values = [var.ami_name_pattern]
  }

  filter {
    name   = "architecture"
    values = ["x86_64"]
  }
}

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  name_prefix = "pinboard-${var.environment}"
  ssm_prefix  = "/pinboard/${var.environment}/"
  ami_id      = var.ami_id != null ? var.ami_id : data.aws_ami.debian[0].id

  # What every instance needs to configure itself (see modules/user_data).
  bootstrap = {
    environment      = var.environment
    region           = var.region
    ami_id           = local.ami_id
    artifacts_bucket = module.media.artifacts_bucket
    ebs_kms_key_arn  = aws_kms_key.ebs.arn
  }
}

# Encrypts the named hosts' volumes (Redis AOF, ZooKeeper data, root disks).
resource "aws_kms_key" "ebs" {
  description             = "${local.name_prefix}: EBS volumes of the named hosts"
  enable_key_rotation     = true
  deletion_window_in_days = 30

  # The account's IAM policies decide who may use the key; EC2 uses it on
  # behalf of whoever creates the volume.
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "AccountAdministersAndDelegatesToIam"
      Effect    = "Allow"
      Principal = { AWS = "arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root" }
      Action    = "kms:*"
      Resource  = "*"
    }]
  })
}

resource "aws_kms_alias" "ebs" {
  name          = "alias/${local.name_prefix}-ebs"
  target_key_id = aws_kms_key.ebs.key_id
}

module "logs" {
  source = "./modules/logs"

  name_prefix    = local.name_prefix
  retention_days = var.log_retention_days
}

module "network" {
  source = "./modules/network"

  name_prefix    = local.name_prefix
  region         = var.region
  zones          = var.availability_zones
  vpc_cidr       = var.vpc_cidr
  log_bucket_arn = module.logs.bucket_arn
}

module "security" {
  source = "./modules/security"

  name_prefix = local.name_prefix
  vpc_id      = module.network.vpc_id
}

module "media" {
  source = "./modules/media"

  name_prefix       = local.name_prefix
  log_bucket_id     = module.logs.bucket_id
  log_bucket_domain = module.logs.bucket_domain_name
  noncurrent_days   = var.log_retention_days
}

module "backups" {
  source = "./modules/backups"

  name_prefix    = local.name_prefix
  log_bucket_id  = module.logs.bucket_id
  retention_days = var.backup_retention_days
  administrators = var.backup_administrators
}

module "iam" {
  source = "./modules/iam"

  name_prefix          = local.name_prefix
  environment          = var.environment
  ssm_prefix           = local.ssm_prefix
  media_bucket_arn     = module.media.media_bucket_arn
  artifacts_bucket_arn = module.media.artifacts_bucket_arn
  s3_kms_key_arn       = module.media.kms_key_arn
  backups_bucket_arn   = module.backups.bucket_arn
  backups_kms_key_arn  = module.backups.kms_key_arn

  control_db_secret_arn         = module.control_db.database.secret_arn
  control_db_secret_kms_key_arn = module.control_db.secret_kms_key_arn
  fenced_security_group_arn     = module.security.fenced_arn
}

module "web" {
  source = "./modules/web"

  name_prefix         = local.name_prefix
  bootstrap           = local.bootstrap
  domain_name         = var.domain_name
  route53_zone_id     = var.route53_zone_id
  vpc_id              = module.network.vpc_id
  public_subnet_ids   = module.network.public_subnet_ids
  private_subnet_ids  = module.network.private_subnet_ids
  alb_security_group  = module.security.ids["alb"]
  web_security_group  = module.security.ids["web"]
  instance_profile    = module.iam.instance_profiles["web"]
  instance_type       = var.web_instance_type
  min_size            = var.web_min_size
  max_size            = var.web_max_size
  desired_capacity    = var.web_desired_capacity
  log_bucket_id       = module.logs.bucket_id
  deletion_protection = var.alb_deletion_protection
}

module "worker" {
  source = "./modules/worker"

  name_prefix        = local.name_prefix
  bootstrap          = local.bootstrap
  private_subnet_ids = module.network.private_subnet_ids
  security_group     = module.security.ids["worker"]
  instance_profile   = module.iam.instance_profiles["worker"]
  instance_type      = var.worker_instance_type
  volume_size        = var.worker_volume_size
  min_size           = var.worker_min_size
  max_size           = var.worker_max_size
  desired_capacity   = var.worker_desired_capacity
}

module "mysql" {
  source = "./modules/mysql"

  bootstrap          = local.bootstrap
  pair_count         = var.mysql_pair_count
  spare_count        = var.mysql_spare_count
  instance_type      = var.mysql_instance_type
  private_subnet_ids = module.network.private_subnet_ids
  security_group     = module.security.ids["mysql"]
  instance_profile   = module.iam.instance_profiles["mysql"]
}

module "memcached" {
  source = "./modules/memcached"

  bootstrap          = local.bootstrap
  nodes_per_pool     = var.memcached_nodes_per_pool
  instance_type      = var.memcached_instance_type
  private_subnet_ids = module.network.private_subnet_ids
  security_group     = module.security.ids["memcached"]
  instance_profile   = module.iam.instance_profiles["data"]
}

module "redis" {
  source = "./modules/redis"

  bootstrap            = local.bootstrap
  pair_count           = var.redis_pair_count
  instance_type        = var.redis_instance_type
  broker_instance_type = var.broker_instance_type
  data_volume_size     = var.redis_data_volume_size
  private_subnet_ids   = module.network.private_subnet_ids
  security_group       = module.security.ids["redis"]
  instance_profile     = module.iam.instance_profiles["data"]
}

module "zookeeper" {
  source = "./modules/zookeeper"

  bootstrap          = local.bootstrap
  instance_type      = var.zookeeper_instance_type
  private_subnet_ids = module.network.private_subnet_ids
  security_group     = module.security.ids["zookeeper"]
  instance_profile   = module.iam.instance_profiles["data"]
}

module "monitoring" {
  source = "./modules/monitoring"

  bootstrap          = local.bootstrap
  instance_type      = var.monitoring_instance_type
  data_volume_size   = var.monitoring_data_volume_size
  private_subnet_ids = module.network.private_subnet_ids
  security_group     = module.security.ids["monitoring"]
  instance_profile   = module.iam.instance_profiles["monitoring"]
}

module "control_db" {
  source = "./modules/control_db"

  name_prefix           = local.name_prefix
  private_subnet_ids    = module.network.private_subnet_ids
  security_group        = module.security.ids["control_db"]
  instance_class        = var.control_db_instance_class
  backup_retention_days = var.control_db_backup_retention_days
  deletion_protection   = var.control_db_deletion_protection
  log_retention_days    = var.log_retention_days
}
