# terraform plan -var-file=environments/production.tfvars
environment        = "production"
region             = "eu-west-1"
availability_zones = ["eu-west-1a", "eu-west-1b"]
domain_name        = "pinboard.example.com"
route53_zone_id    = "Z0000000000PRODUCTION"

mysql_pair_count         = 4
mysql_instance_type      = "i4i.2xlarge"
memcached_nodes_per_pool = 2
memcached_instance_type  = "r6i.xlarge"
redis_pair_count         = 2
redis_instance_type      = "r6i.xlarge"
redis_data_volume_size   = 200
broker_instance_type     = "m6i.large"
zookeeper_instance_type  = "m6i.large"

monitoring_instance_type    = "m6i.large"
monitoring_data_volume_size = 100

web_instance_type    = "c6i.xlarge"
web_min_size         = 2
web_max_size         = 12
web_desired_capacity = 4

# A shard host's data unpacked from its backup, verified or restored on a worker host
# (i4i.2xlarge: 1,875 GB of instance store).
worker_instance_type    = "c6i.large"
worker_volume_size      = 2000
worker_min_size         = 2
worker_max_size         = 8
worker_desired_capacity = 2

control_db_instance_class        = "db.m7g.large"
control_db_backup_retention_days = 14
control_db_deletion_protection   = true

alb_deletion_protection = true
log_retention_days      = 365
