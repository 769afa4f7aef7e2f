"""Cache pools: one per kind of data (users, boards, pins, lists), each sized and watched alone.

A pool is a small memcached-shaped interface over bytes. ``MemcachePool``
speaks to memcached servers through pymemcache (keys spread over the servers
by rendezvous hashing); ``LocalPool`` keeps the same semantics in process
memory for the embedded default and for scripts. Each pool counts its hits
and misses, so operators see which kind of data misses.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass
class PoolStats:
    hits: int = 0
    misses: int = 0
    calls: int = 0  # round trips (or, in process, operations) made

    def as_dict(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "calls": self.calls}


class CachePool(Protocol):
    """What the read-through layer needs from a pool (memcached's commands)."""

    name: str
    stats: PoolStats

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]: ...
    def gets_many(self, keys: Sequence[str]) -> dict[str, tuple[bytes, Any]]: ...
    def add(self, key: str, value: bytes, expire: int) -> bool: ...
    def add_many(self, items: Mapping[str, bytes], expire: int) -> None:
        """``add`` each item (replies not awaited; this thread's later reads see it)."""

    def cas(self, key: str, value: bytes, token: Any, expire: int) -> bool: ...
    def cas_many(self, items: Sequence[tuple[str, bytes, Any]], expire: int) -> None:
        """``cas`` each (key, value, token) (replies not awaited; likewise)."""

    def append(self, key: str, value: bytes) -> bool: ...
    def delete_many(self, keys: Iterable[str]) -> None: ...
    def clear(self) -> None: ...


class MemcachePool:
    """A pool of memcached servers (``["10.0.0.1:11211", ...]``)."""

    def __init__(self, name: str, servers: Sequence[str], *, timeout: float = 0.5) -> None:
        from pymemcache.client.base import Client
        from pymemcache.client.hash import HashClient

        self.name = name
        self.stats = PoolStats()
        nodes = [(host, int(port)) for host, port in (s.rsplit(":", 1) for s in servers)]
        # One client (one connection per server) per thread: commands a thread sends
        # without waiting for replies are then executed before its next read.
        # ignore_exc: a dead cache server is a miss, never an error page. no_delay:
        # a read right after unanswered writes must not wait for a delayed ACK.
        # One server needs no key hashing (pymemcache's murmur3 is pure Python).
        options = {"connect_timeout": timeout, "timeout": timeout, "no_delay": True}
        if len(nodes) == 1:
            self._new_client = lambda: Client(nodes[0], ignore_exc=True, **options)
        else:
            self._new_client = lambda: HashClient(
                nodes, ignore_exc=True, use_pooling=False, **options
            )
        self._local = threading.local()
        self._clients: list[Any] = []
        self._clients_lock = threading.Lock()

    @property
    def _client(self) -> Any:
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = self._new_client()  # type: ignore[no-untyped-call]
            with self._clients_lock:
                self._clients.append(client)
        return client

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]:
        if not keys:
            return {}
        self.stats.calls += 1
        found: dict[str, bytes] = self._client.get_many(list(keys)) or {}
        self.stats.hits += len(found)
        self.stats.misses += len(keys) - len(found)
        return found

    def gets_many(self, keys: Sequence[str]) -> dict[str, tuple[bytes, Any]]:
        if not keys:
            return {}
        self.stats.calls += 1
        return dict(self._client.gets_many(list(keys)) or {})

    def add(self, key: str, value: bytes, expire: int) -> bool:
        self.stats.calls += 1
        return bool(self._client.add(key, value, expire=expire, noreply=False))

    def cas(self, key: str, value: bytes, token: Any, expire: int) -> bool:
        self.stats.calls += 1
        return bool(self._client.cas(key, value, token, expire=expire, noreply=False))

    # memcached has no multi-add or multi-cas: these go back to back without waiting
    # for replies (noreply), on this thread's connections, ahead of its next read.
    def add_many(self, items: Mapping[str, bytes], expire: int) -> None:
        if items:
            self.stats.calls += 1
            for key, value in items.items():
                self._client.add(key, value, expire=expire, noreply=True)

    def cas_many(self, items: Sequence[tuple[str, bytes, Any]], expire: int) -> None:
        if items:
            self.stats.calls += 1
            for key, value, token in items:
                self._client.cas(key, value, token, expire=expire, noreply=True)

    def append(self, key: str, value: bytes) -> bool:
        self.stats.calls += 1
        return bool(self._client.append(key, value, noreply=False))

    def delete_many(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        if keys:
            self.stats.calls += len(keys)  # memcached has no multi-delete: one each
            self._client.delete_many(keys, noreply=False)

    def clear(self) -> None:
        self._client.flush_all(noreply=False)

    def close(self) -> None:
        with self._clients_lock:
            clients, self._clients = self._clients, []
        for client in clients:
            client.close()
        self._local = threading.local()


class LocalPool:
    """memcached's semantics in this process's memory (thread-safe; expiry honoured)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.stats = PoolStats()
        self._items: dict[str, tuple[bytes, int, float]] = {}  # value, cas token, expires at
        self._next_token = 0
        self._lock = threading.Lock()

    def _live(self, key: str) -> tuple[bytes, int, float] | None:
        item = self._items.get(key)
        if item is not None and item[2] and item[2] < time.monotonic():
            del self._items[key]
            return None
        return item

    def _store(self, key: str, value: bytes, expire: int) -> None:
        self._next_token += 1
        expires = time.monotonic() + expire if expire else 0.0
        self._items[key] = (bytes(value), self._next_token, expires)

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]:
        if not keys:
            return {}
        with self._lock:
            self.stats.calls += 1
            found = {k: item[0] for k in keys if (item := self._live(k)) is not None}
            self.stats.hits += len(found)
            self.stats.misses += len(keys) - len(found)
            return found

    def gets_many(self, keys: Sequence[str]) -> dict[str, tuple[bytes, Any]]:
        with self._lock:
            self.stats.calls += 1
            return {k: (item[0], item[1]) for k in keys if (item := self._live(k)) is not None}

    def add(self, key: str, value: bytes, expire: int) -> bool:
        with self._lock:
            self.stats.calls += 1
            if self._live(key) is not None:
                return False
            self._store(key, value, expire)
            return True

    def cas(self, key: str, value: bytes, token: Any, expire: int) -> bool:
        with self._lock:
            self.stats.calls += 1
            item = self._live(key)
            if item is None or item[1] != token:
                return False
            self._store(key, value, expire)
            return True

    def add_many(self, items: Mapping[str, bytes], expire: int) -> None:
        for key, value in items.items():
            self.add(key, value, expire)

    def cas_many(self, items: Sequence[tuple[str, bytes, Any]], expire: int) -> None:
        for key, value, token in items:
            self.cas(key, value, token, expire)

    def append(self, key: str, value: bytes) -> bool:
        with self._lock:
            self.stats.calls += 1
            item = self._live(key)
            if item is None:
                return False
            self._next_token += 1
            self._items[key] = (item[0] + value, self._next_token, item[2])
            return True

    def delete_many(self, keys: Iterable[str]) -> None:
        with self._lock:
            self.stats.calls += 1
            for key in keys:
                self._items.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def pools_from_config(config: Mapping[str, Mapping[str, Any]]) -> dict[str, CachePool]:
    """Pools by name from ``{"pins": {"servers": [...]}, "users": {}, ...}`` (no servers: local)."""
    pools: dict[str, CachePool] = {}
    for name, options in config.items():
        servers = options.get("servers")
        pools[name] = MemcachePool(name, servers) if servers else LocalPool(name)
    return pools
