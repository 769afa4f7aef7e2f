"""Cache pools in front of the shard store (memcached, or process memory)."""

from .cached_store import CachedStore
from .local_pool import LocalPool
from .pools import CachePool, MemcachePool, PoolStats

__all__ = [
    "CachePool",
    "CachedStore",
    "LocalPool",
    "MemcachePool",
    "PoolStats",
]
