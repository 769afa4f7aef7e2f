variable "name_prefix" {
  description = "Prefix of resource names (pinboard-<environment>)."
  type        = string
}

variable "bootstrap" {
  description = "Environment, region, AMI, artifacts bucket and EBS key shared by every instance."
  type = object({
    environment      = string
    region           = string
    ami_id           = string
    artifacts_bucket = string
    ebs_kms_key_arn  = string
  })
}

variable "domain_name" {
  description = "The site's public host name."
  type        = string
}

variable "route53_zone_id" {
  description = "Hosted zone of domain_name."
  type        = string
}

variable "vpc_id" {
  description = "ID of the VPC."
  type        = string
}

variable "public_subnet_ids" {
  description = "Public subnets of the load balancer."
  type        = list(string)
}

variable "private_subnet_ids" {
  description = "Private subnets of the web hosts."
  type        = list(string)
}

variable "alb_security_group" {
  description = "Security group of the load balancer."
  type        = string
}

variable "web_security_group" {
  description = "Security group of the web hosts."
  type        = string
}

variable "instance_profile" {
  description = "IAM instance profile of the web hosts."
  type        = string
}

variable "instance_type" {
  description = "EC2 instance type of the web hosts."
  type        = string
}

variable "min_size" {
  description = "Minimum number of web hosts."
  type        = number
}

variable "max_size" {
  description = "Maximum number of web hosts."
  type        = number
}

variable "desired_capacity" {
  description = "Number of web hosts to run now."
  type        = number
}

variable "log_bucket_id" {
  description = "Bucket receiving the load balancer's access logs (prefix alb/)."
  type        = string
}

variable "deletion_protection" {
  description = "Refuse to delete the load balancer."
  type        = bool
  default     = true
}
