"""Cache pools in front of the shard store (memcached, or process memory)."""

from .pools import CachePool, LocalPool, MemcachePool, PoolStats, pools_from_config
from .store import CachedStore

__all__ = [
    "CachePool",
    "CachedStore",
    "LocalPool",
    "MemcachePool",
    "PoolStats",
    "pools_from_config",
]
