# terraform plan -var-file=environments/staging.tfvars
environment        = "staging"
region             = "eu-west-1"
availability_zones = ["eu-west-1a", "eu-west-1b"]
domain_name        = "staging.pinboard.example.com"
route53_zone_id    = "Z0000000000STAGING"

mysql_pair_count         = 1
mysql_instance_type      = "i4i.xlarge"
memcached_nodes_per_pool = 1
memcached_instance_type  = "r6i.large"
redis_pair_count         = 1
redis_instance_type      = "r6i.large"
broker_instance_type     = "m6i.large"
zookeeper_instance_type  = "m6i.large"

monitoring_instance_type    = "t3.large"
monitoring_data_volume_size = 100

web_instance_type    = "c6i.large"
web_min_size         = 1
web_max_size         = 2
web_desired_capacity = 1

# A shard host's data unpacked from its backup, verified or restored on a worker host
# (i4i.xlarge: 937 GB of instance store).
worker_instance_type    = "c6i.large"
worker_volume_size      = 1000
worker_min_size         = 1
worker_max_size         = 2
worker_desired_capacity = 1

control_db_instance_class        = "db.t4g.small"
control_db_backup_retention_days = 7

# Staging is torn down and rebuilt; production keeps the defaults (true).
alb_deletion_protection        = false
control_db_deletion_protection = false
log_retention_days             = 90
