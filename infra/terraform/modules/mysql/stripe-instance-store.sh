#!/bin/sh
# Stripe every NVMe instance-store drive into one RAID 0 array and mount it
# where MariaDB's data directory lives, before Puppet installs MariaDB. The
# device, mount point and fstab line are the ones profile::mysql_shard
# manages, so Puppet finds them in place and changes nothing.
#
# Instance store is lost when the instance stops: such a host is replaced and
# rebuilt from its pair (nofail keeps it booting; MariaDB finds no data).
set -eu

array=/dev/md/mysql
mount_point=/srv/mysql

if mountpoint -q "$mount_point"; then
  exit 0
fi

drives=""
for block in /sys/block/nvme*n1; do
  if grep -q "Instance Storage" "$block/device/model"; then
    drives="$drives /dev/$(basename "$block")"
  fi
done
# shellcheck disable=SC2086 # one word per drive
set -- $drives
if [ "$#" -eq 0 ]; then
  echo "no NVMe instance-store drive found: mysql_instance_type must have instance storage" >&2
  exit 1
fi

if [ ! -e "$array" ]; then
  # --force allows a one-drive "array", so every size of host has the same layout.
  mdadm --create "$array" --run --force --level=0 --chunk=256 --raid-devices="$#" "$@"
  mdadm --detail --scan > /etc/mdadm/mdadm.conf
  update-initramfs -u
fi

blkid "$array" >/dev/null || mkfs.xfs "$array"
mkdir -p "$mount_point"
grep -q " $mount_point " /etc/fstab || echo "$array $mount_point xfs noatime,nofail 0 0" >> /etc/fstab
mount "$mount_point"
