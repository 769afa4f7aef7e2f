"""Mod shard: route a key that is not an ID (a login, an email address, ...) to a shard.

``bucket(key)`` is the seeds' ``md5(key) % 4096``; the topology maps the bucket
to a shard (``Topology.lookup_shard``) and the shard to its host.
"""

from __future__ import annotations

from hashlib import md5

from .topology import MOD_BUCKETS


def bucket(key: str) -> int:
    """The mod-shard bucket of ``key``: ``int(md5(key).hexdigest(), 16) % 4096``."""
    return int(md5(key.encode()).hexdigest(), 16) % MOD_BUCKETS
