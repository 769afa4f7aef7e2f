variable "environment" {
  description = "Deployment environment; part of every name, tag and SSM path."
  type        = string

  validation {
    condition     = contains(["staging", "production"], var.environment)
    error_message = "environment must be \"staging\" or \"production\"."
  }
}

variable "region" {
  description = "AWS region to deploy into, e.g. eu-west-1."
  type        = string
}

variable "domain_name" {
  description = "The site's public host name (e.g. pinboard.example.com); the ALB's certificate and alias record use it."
  type        = string
}

variable "route53_zone_id" {
  description = "ID of the existing Route53 hosted zone that holds domain_name (certificate validation and the alias record)."
  type        = string
}

variable "availability_zones" {
  description = "The two availability zones of the VPC, in order: MySQL and Redis \"a\" members go in the first, \"b\" members in the second."
  type        = list(string)

  validation {
    condition     = length(var.availability_zones) == 2 && length(distinct(var.availability_zones)) == 2
    error_message = "availability_zones must name two different zones."
  }
}

variable "vpc_cidr" {
  description = "The VPC's address range. A /16: MySQL server_id is derived from the last two octets of a host's address."
  type        = string
  default     = "10.0.0.0/16"

  validation {
    condition     = can(cidrhost(var.vpc_cidr, 0)) && endswith(var.vpc_cidr, "/16")
    error_message = "vpc_cidr must be a valid /16 IPv4 range."
  }
}

variable "ami_name_pattern" {
  description = "Name filter for the Debian 12 AMI published by Debian (owner 136693071363)."
  type        = string
  default     = "debian-12-amd64-*"
}

variable "ami_id" {
  description = "Pin a specific AMI instead of the newest match of ami_name_pattern (null: look it up)."
  type        = string
  default     = null
}

variable "mysql_pair_count" {
  description = "Number of MySQL masters, each with two replicas (mysql001a/b/c, mysql002a/b/c, ...)."
  type        = number
  default     = 2

  validation {
    condition     = var.mysql_pair_count >= 1 && var.mysql_pair_count <= 999 && floor(var.mysql_pair_count) == var.mysql_pair_count
    error_message = "mysql_pair_count must be a whole number from 1 to 999."
  }
}

variable "mysql_spare_count" {
  description = "Spare MySQL shard hosts (mysqlspare01, ...), alternately in each zone: the guard replaces a dead replica with one."
  type        = number
  default     = 2

  validation {
    condition     = var.mysql_spare_count >= 0 && var.mysql_spare_count <= 99 && floor(var.mysql_spare_count) == var.mysql_spare_count
    error_message = "mysql_spare_count must be a whole number from 0 to 99."
  }
}

variable "mysql_instance_type" {
  description = "Instance type of the shard hosts; must have NVMe instance-store drives (striped for the MariaDB data directory) and run x86_64."
  type        = string
  default     = "i4i.2xlarge"

  validation {
    # i3, i3en, i4i, i7ie, or a "d" variant of c/m/r/x/z (m6id, r6idn, ...).
    condition     = can(regex("^(i3|i3en|i4i|i7ie|[cmrxz][0-9]+[a-z]*d[a-z]*)\\.", var.mysql_instance_type))
    error_message = "mysql_instance_type must be an instance-store class (i4i, i3en, r6id, ...)."
  }
}

variable "memcached_nodes_per_pool" {
  description = "Memcached instances in each pool (users, boards, pins, lists)."
  type        = number
  default     = 2

  validation {
    condition     = var.memcached_nodes_per_pool >= 1 && floor(var.memcached_nodes_per_pool) == var.memcached_nodes_per_pool
    error_message = "memcached_nodes_per_pool must be a whole number of at least 1."
  }
}

variable "memcached_instance_type" {
  description = "Instance type of the memcached hosts."
  type        = string
  default     = "r6i.large"
}

variable "redis_pair_count" {
  description = "Number of Redis primary/replica pairs for the follower graph and feeds (redis001a/b, ...)."
  type        = number
  default     = 1

  validation {
    condition     = var.redis_pair_count >= 1 && var.redis_pair_count <= 999 && floor(var.redis_pair_count) == var.redis_pair_count
    error_message = "redis_pair_count must be a whole number from 1 to 999."
  }
}

variable "redis_instance_type" {
  description = "Instance type of the Redis pair hosts."
  type        = string
  default     = "r6i.large"
}

variable "broker_instance_type" {
  description = "Instance type of the Redis instance that is Celery's broker."
  type        = string
  default     = "m6i.large"
}

variable "redis_data_volume_size" {
  description = "Size in GiB of each Redis host's encrypted EBS volume (AOF and RDB files)."
  type        = number
  default     = 100
}

variable "zookeeper_instance_type" {
  description = "Instance type of the three ZooKeeper nodes."
  type        = string
  default     = "m6i.large"
}

variable "web_instance_type" {
  description = "Instance type of the web hosts (nginx and gunicorn)."
  type        = string
  default     = "c6i.large"
}

variable "web_min_size" {
  description = "Minimum number of web hosts."
  type        = number
  default     = 2
}

variable "web_max_size" {
  description = "Maximum number of web hosts."
  type        = number
  default     = 6
}

variable "web_desired_capacity" {
  description = "Number of web hosts to run now."
  type        = number
  default     = 2
}

variable "worker_instance_type" {
  description = "Instance type of the Celery worker hosts."
  type        = string
  default     = "c6i.large"
}

variable "worker_volume_size" {
  description = "GiB of each worker host's disk. The backups' daily verification and the restores unpack a whole shard host's backup into a scratch server on a worker host: give it the largest shard host's data, with room to spare."
  type        = number
  default     = 200

  validation {
    condition     = var.worker_volume_size >= 20 && var.worker_volume_size <= 16384
    error_message = "worker_volume_size is 20 to 16384 GiB (gp3)."
  }
}

variable "worker_min_size" {
  description = "Minimum number of worker hosts."
  type        = number
  default     = 1
}

variable "worker_max_size" {
  description = "Maximum number of worker hosts."
  type        = number
  default     = 4
}

variable "worker_desired_capacity" {
  description = "Number of worker hosts to run now."
  type        = number
  default     = 2
}

variable "monitoring_instance_type" {
  description = "Instance type of the monitoring host (Prometheus)."
  type        = string
  default     = "m6i.large"
}

variable "monitoring_data_volume_size" {
  description = "Size in GiB of the monitoring host's EBS volume for Prometheus's samples (15 days; Puppet keeps them under 80 GB)."
  type        = number
  default     = 100

  validation {
    condition     = var.monitoring_data_volume_size >= 100
    error_message = "monitoring_data_volume_size must be at least 100 GiB: Puppet lets Prometheus keep up to 80 GB (profile::prometheus::retention_size)."
  }
}

variable "control_db_instance_class" {
  description = "RDS instance class of the control database (staff accounts, config journal, long jobs)."
  type        = string
  default     = "db.m7g.large"
}

variable "control_db_backup_retention_days" {
  description = "Days of automated backups (point-in-time recovery) of the control database."
  type        = number
  default     = 14
}

variable "control_db_deletion_protection" {
  description = "Refuse to delete the control database (turn off only to tear an environment down)."
  type        = bool
  default     = true
}

variable "backup_retention_days" {
  description = "Days each backup and archived binary log is locked for (S3 Object Lock, COMPLIANCE: nobody can delete it sooner); the lifecycle expires them two days later."
  type        = number
  default     = 8

  validation {
    condition     = var.backup_retention_days >= 1 && floor(var.backup_retention_days) == var.backup_retention_days
    error_message = "backup_retention_days must be a whole number of at least 1."
  }
}

variable "backup_administrators" {
  description = "IAM principal ARNs (wildcards allowed) that may change the backup bucket's lock, lifecycle and policy besides the account's root user: the role you run Terraform as, or its changes to them are refused."
  type        = list(string)
  default     = []
}

variable "alb_deletion_protection" {
  description = "Refuse to delete the load balancer (turn off only to tear an environment down)."
  type        = bool
  default     = true
}

variable "log_retention_days" {
  description = "Days to keep ALB, CloudFront, S3 access and VPC flow logs."
  type        = number
  default     = 365
}
