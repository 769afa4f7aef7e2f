output "vpc_id" {
  description = "ID of the VPC."
  value       = aws_vpc.this.id
}

output "availability_zones" {
  description = "The two availability zones, in subnet order."
  value       = local.zones
}

output "public_subnet_ids" {
  description = "Public subnets (load balancer, NAT gateways), one per zone."
  value       = aws_subnet.public[*].id
}

output "private_subnet_ids" {
  description = "Private subnets (every instance), one per zone, in zone order."
  value       = aws_subnet.private[*].id
}
