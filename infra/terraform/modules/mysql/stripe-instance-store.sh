#!/bin/sh
# Stripe every NVMe instance-store drive into one RAID 0 array for
# /var/lib/mysql, before Puppet installs MariaDB. Instance store is lost when
# the instance stops: such a host is replaced and rebuilt from its pair, never
# restarted with an empty data directory by accident (nofail keeps it booting,
# and MariaDB will not find its data).
set -eu

mount_point=/var/lib/mysql

if mountpoint -q "$mount_point"; then
  exit 0
fi

drives=""
for block in /sys/block/nvme*n1; do
  if grep -q "Instance Storage" "$block/device/model"; then
    drives="$drives /dev/$(basename "$block")"
  fi
done
set -- $drives
if [ "$#" -eq 0 ]; then
  echo "no NVMe instance-store drive found: mysql_instance_type must have instance storage" >&2
  exit 1
fi

if [ ! -b /dev/md0 ]; then
  # --force allows a one-drive "array", so every size of host has the same layout.
  mdadm --create /dev/md0 --run --force --level=0 --chunk=256 --raid-devices="$#" "$@"
  mdadm --detail --scan > /etc/mdadm/mdadm.conf
  update-initramfs -u
fi

# No lost+found in an XFS root directory: MariaDB would take it for a database.
blkid /dev/md0 >/dev/null || mkfs.xfs -L mysql /dev/md0
mkdir -p "$mount_point"
grep -q "LABEL=mysql" /etc/fstab || echo "LABEL=mysql $mount_point xfs defaults,noatime,nofail 0 2" >> /etc/fstab
mount "$mount_point"
