"""Pinners' sessions and rate limits on Redis: django-redis, with what the site needs of it
while that Redis cannot be reached.

They live on a Redis with its append-only file on (``PINBOARD_SESSIONS_REDIS_URL``:
settings.base), not in the shard store's memcached pools: a memcached restart empties it
and logged every pinner out, and reset every rate limit; Redis comes back from a restart
with what it held. While it cannot be reached (a restart, a network cut):

* a read is a miss (a pinner looks logged out, a rate limit counts nothing and refuses
  nothing), never an error on the page; each command gives up after ``SOCKET_SECONDS``
  (``read`` tells the two apart: sessions keep a key that Redis could not be asked about);
* ``add`` says it stored the value (it is lost with the server): otherwise Django would
  try 10,000 new session keys, then fail the page;
* ``incr`` and ``decr`` raise ``ValueError``, as for a key that is not there;
* ``delete`` raises ``CacheUnreachable``: a delete is how a session ends (a log-out), and
  one that did not reach Redis would come back with it, so it is never lost in silence.
"""

from __future__ import annotations

import contextlib
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django_redis.cache import RedisCache as DjangoRedisCache
from django_redis.exceptions import ConnectionInterrupted

#: How long a command (and a connection) to the sessions' Redis may take: a page waits no
#: longer than this for a Redis that does not answer.
SOCKET_SECONDS = 0.5


class CacheUnreachable(Exception):
    """The cache's Redis could not be reached: what was asked of it may not have happened."""


def redis_cache(url: str, prefix: str) -> dict[str, Any]:
    """The ``CACHES`` entry of a cache on the Redis at ``url``, its keys under ``prefix:``."""
    return {
        "BACKEND": "pinboard.cache_backend.RedisCache",
        "LOCATION": url,
        "KEY_PREFIX": prefix,
        "OPTIONS": {
            "SOCKET_CONNECT_TIMEOUT": SOCKET_SECONDS,
            "SOCKET_TIMEOUT": SOCKET_SECONDS,
        },
    }


class RedisCache(DjangoRedisCache):  # type: ignore[misc]  # django-redis ships no types
    """``{"BACKEND": "pinboard.cache_backend.RedisCache", "LOCATION": "redis://host:port/db",
    "KEY_PREFIX": "sessions"}`` (``redis_cache`` makes one)."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._ignore_exceptions = True  # Redis out of reach: a miss (see the module)

    def serves(self) -> bool:
        """Whether the cache's Redis answers now."""
        try:
            return bool(self.client.get_client(write=True).ping())
        except Exception:  # noqa: BLE001 - any failure to answer is the answer
            return False

    def clear(self) -> None:
        """This cache's keys only (under its prefix), not django-redis's ``FLUSHDB``: the
        database is shared with the other cache, and by default with the follower graph."""
        with contextlib.suppress(ConnectionInterrupted):
            self.client.delete_pattern("*", itersize=1000)

    def read(self, key: Any, version: int | None = None) -> Any:
        """``get``, but ``CacheUnreachable`` rather than a miss when Redis cannot be reached."""
        try:
            return self.client.get(key, version=version)
        except ConnectionInterrupted as error:
            raise CacheUnreachable(
                f"the {self.key_prefix} cache's Redis cannot be reached"
            ) from error

    def add(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        try:
            return bool(self.client.add(key, value, timeout=timeout, version=version))
        except ConnectionInterrupted:
            return True  # stored, and lost with the server (see the module)

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        try:
            return int(self.client.incr(key, delta=delta, version=version))
        except ConnectionInterrupted:
            raise ValueError(f"Key '{key}' not found (its Redis cannot be reached)") from None

    def decr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        return self.incr(key, -delta, version=version)

    def delete(self, key: Any, version: int | None = None) -> bool:
        try:
            return bool(self.client.delete(key, version=version))
        except ConnectionInterrupted as error:
            raise CacheUnreachable(
                f"the {self.key_prefix} cache's Redis cannot be reached"
            ) from error
