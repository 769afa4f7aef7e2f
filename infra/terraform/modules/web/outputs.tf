output "alb_dns_name" {
  description = "DNS name of the load balancer."
  value       = aws_lb.this.dns_name
}

output "site_url" {
  description = "The site's public URL."
  value       = "https://${var.domain_name}"
}
