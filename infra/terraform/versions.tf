terraform {
  # use_lockfile (S3-native state locking) needs Terraform 1.10.
  required_version = ">= 1.10"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.80, < 7.0"
    }
  }

  # Partial configuration: bucket, key and region come from
  # `terraform init -backend-config=...` (see docs/deploy.md), so one
  # configuration serves every environment.
  backend "s3" {
    encrypt      = true
    use_lockfile = true
  }
}
