provider "aws" {
  region = var.region

  # Every taggable resource carries Project and Environment; instances add Role
  # (and Name for named hosts) themselves.
  default_tags {
    tags = {
      Project     = "pinboard"
      Environment = var.environment
    }
  }
}
