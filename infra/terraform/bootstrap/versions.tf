terraform {
  required_version = ">= 1.10"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.80, < 7.0"
    }
  }

  # This configuration creates the state bucket, so its own state stays
  # local (keep terraform.tfstate with the operator; it holds no secret).
}

provider "aws" {
  region = var.region

  default_tags {
    tags = {
      Project = "pinboard"
      Purpose = "terraform-state"
    }
  }
}
