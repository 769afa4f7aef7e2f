"""Django's cache API on the shard store's memcached pools, for pinners' sessions and rate limits.

Django's own PyMemcacheCache raises the first error of a server that went away to
the page (a 500 on every process, once per retry), then reroutes the server's keys
to the others; when it comes back, sessions ended meanwhile (a log-out is a
delete) are live again on it, and those made meanwhile are gone. ``PoolCache``
speaks to the same servers through ``shardstore.cache.MemcachePool``: a server
that is down is a miss (a pinner looks logged out, a rate limit does not count)
and never an error; a key never moves to another server; and before a server that
was cut off serves again, the sets, deletes and increments it missed are replayed
there as deletes (shardstore/cache/health.py), so no ended session comes back.

Values are pickled (as Django's memcached backends do), integers stored as digits
so that ``incr`` works on them. ``close()`` keeps the connections: they are one
per thread and server, reused by the next request, in one pool per prefix and
servers shared by the cache objects Django makes for each thread.
"""

from __future__ import annotations

import pickle
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from django.core.cache.backends.base import (
    DEFAULT_TIMEOUT,
    BaseCache,
    InvalidCacheKey,
    memcache_key_warnings,
)

from shardstore.cache import MemcachePool

_PICKLED = b"\x80"  # how pickle protocol 2 and later begins
_THIRTY_DAYS = 30 * 24 * 3600  # memcached reads a longer expiry as a Unix time


_pools: dict[tuple[str, tuple[str, ...]], MemcachePool] = {}
_pools_lock = threading.Lock()


def _shared_pool(name: str, servers: tuple[str, ...]) -> MemcachePool:
    """One pool per name and servers in the process: Django builds a cache object per
    thread, and the pool already keeps one connection per thread and server."""
    with _pools_lock:
        pool = _pools.get((name, servers))
        if pool is None:
            pool = _pools[(name, servers)] = MemcachePool(name, list(servers))
        return pool


def close_pools() -> None:
    """Close and forget every pool (a test whose servers are gone; the next use reopens)."""
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.close()


def encode(value: Any) -> bytes:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value).encode()
    return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)


def decode(raw: bytes) -> Any:
    return pickle.loads(raw) if raw.startswith(_PICKLED) else int(raw)


class PoolCache(BaseCache):
    """A Django cache backend: ``{"BACKEND": "pinboard.cache_backend.PoolCache",
    "LOCATION": ["host:port", ...], "KEY_PREFIX": "sessions"}``."""

    def __init__(self, location: str | list[str], params: dict[str, Any]) -> None:
        super().__init__(params)
        servers = location.split(",") if isinstance(location, str) else location
        self.pool = _shared_pool(self.key_prefix or "django", tuple(servers))

    def get_backend_timeout(self, timeout: Any = DEFAULT_TIMEOUT) -> int:
        """memcached's expiry: 0 never expires, so Django's 0 (expire now) is -1."""
        if timeout is DEFAULT_TIMEOUT:
            timeout = self.default_timeout
        if timeout is None:
            return 0
        seconds = int(timeout) or -1
        return seconds + int(time.time()) if seconds > _THIRTY_DAYS else seconds

    def validate_key(self, key: str) -> None:
        for warning in memcache_key_warnings(key):  # memcached refuses such a key
            raise InvalidCacheKey(warning)

    def serves(self, key: Any, version: int | None = None) -> bool:
        """Whether the server holding ``key`` is up (for this process)."""
        return self.pool.health[self.pool.server_of(self._key(key, version))].up

    def _key(self, key: Any, version: int | None) -> str:
        return str(self.make_and_validate_key(key, version=version))

    def add(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        """Stored if absent. On a server that is down: True, stored and lost with it, as
        memcached may evict any item at once (else a new session would be refused 10,000
        times, then a RuntimeError: the page a 500 instead of a pinner logged out)."""
        cache_key = self._key(key, version)
        if self.pool.add(cache_key, encode(value), self.get_backend_timeout(timeout)):
            return True
        return not self.pool.health[self.pool.server_of(cache_key)].up

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        cache_key = self._key(key, version)
        raw = self.pool.get_many([cache_key]).get(cache_key)
        return default if raw is None else decode(raw)

    def get_many(self, keys: Iterable[Any], version: int | None = None) -> dict[Any, Any]:
        by_cache_key = {self._key(key, version): key for key in keys}
        found = self.pool.get_many(list(by_cache_key))
        return {by_cache_key[k]: decode(raw) for k, raw in found.items()}

    def set(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> None:
        self.pool.set_many({self._key(key, version): encode(value)}, self.get_backend_timeout(timeout))  # fmt: skip

    def set_many(
        self, data: Mapping[Any, Any], timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> list[Any]:
        items = {self._key(key, version): encode(value) for key, value in data.items()}
        self.pool.set_many(items, self.get_backend_timeout(timeout))
        return []

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        return self.pool.touch(self._key(key, version), self.get_backend_timeout(timeout))

    def delete(self, key: Any, version: int | None = None) -> bool:
        return self.pool.delete(self._key(key, version))

    def delete_many(self, keys: Iterable[Any], version: int | None = None) -> None:
        self.pool.delete_many([self._key(key, version) for key in keys])

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        value = self.pool.incr(self._key(key, version), delta)
        if value is None:
            raise ValueError(f"Key '{key}' not found")
        return value

    def decr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        return self.incr(key, -delta, version=version)

    def clear(self) -> None:
        self.pool.clear()

    def close(self, **kwargs: Any) -> None:
        """Django calls this after each request: the per-thread connections stay open."""
