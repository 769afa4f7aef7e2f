output "id" {
  description = "Instance ID."
  value       = aws_instance.this.id
}

output "name" {
  description = "Host name (the Name tag)."
  value       = var.name
}

output "address" {
  description = "Private IPv4 address."
  value       = aws_instance.this.private_ip
}

output "zone" {
  description = "Availability zone."
  value       = aws_instance.this.availability_zone
}
