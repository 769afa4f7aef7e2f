"""Cache pools in front of the shard store (memcached, or process memory)."""

from .local_pool import LocalPool
from .pools import CachePool, MemcachePool, PoolStats
from .store import CachedStore

__all__ = [
    "CachePool",
    "CachedStore",
    "LocalPool",
    "MemcachePool",
    "PoolStats",
]
