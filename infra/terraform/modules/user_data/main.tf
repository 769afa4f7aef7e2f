# The one cloud-init document every instance boots with: install Puppet, write
# the facts that tell Puppet what this host is, optionally prepare the disks,
# then fetch the release's Puppet tree and the environment's Hiera file from
# the artifacts bucket and apply site.pp (see puppet-apply.sh.tftpl).

locals {
  facts = merge(
    {
      pinboard_role        = var.role
      pinboard_environment = var.environment
    },
    var.host_name == null ? {} : { pinboard_host = var.host_name },
  )

  pre_puppet_file = var.pre_puppet == "" ? [] : [{
    path        = "/usr/local/sbin/pinboard-pre-puppet"
    permissions = "0755"
    owner       = "root:root"
    content     = var.pre_puppet
  }]

  cloud_config = {
    package_update = true
    packages       = concat(["puppet", "awscli", "ca-certificates"], var.extra_packages)
    write_files = concat(
      [
        {
          path        = "/etc/facter/facts.d/pinboard.yaml"
          permissions = "0644"
          owner       = "root:root"
          content     = yamlencode(local.facts)
        },
        {
          path        = "/usr/local/sbin/pinboard-puppet-apply"
          permissions = "0755"
          owner       = "root:root"
          content = templatefile("${path.module}/puppet-apply.sh.tftpl", {
            environment      = var.environment
            region           = var.region
            artifacts_bucket = var.artifacts_bucket
          })
        },
      ],
      local.pre_puppet_file,
    )
    runcmd = concat(
      var.pre_puppet == "" ? [] : [["/usr/local/sbin/pinboard-pre-puppet"]],
      [["/usr/local/sbin/pinboard-puppet-apply"]],
    )
  }
}
