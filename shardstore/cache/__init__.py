"""Cache pools in front of the shard store (memcached, or process memory)."""

from .cached_store import CachedStore
from .local_pool import LocalMemory, LocalPool
from .pools import CachePool, MemcachePool, PoolStats
from .reads import Read, read_together

__all__ = [
    "CachePool",
    "CachedStore",
    "LocalMemory",
    "LocalPool",
    "MemcachePool",
    "PoolStats",
    "Read",
    "read_together",
]
