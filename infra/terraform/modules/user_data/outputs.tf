output "cloud_config" {
  description = "The rendered cloud-init user data (plain text; base64encode it for launch templates)."
  value       = "#cloud-config\n${yamlencode(local.cloud_config)}"
}
