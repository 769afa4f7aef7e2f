"""A cache pool in this process's memory, with memcached's semantics: the embedded default's
pools, and scripts'."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .pools import PoolStats


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

    def claim_many(self, items: Mapping[str, bytes], expire: int) -> dict[str, tuple[bytes, Any]]:
        with self._lock:
            self.stats.calls += 1
            for key, value in items.items():
                if self._live(key) is None:
                    self._store(key, value, expire)
            return {k: (item[0], item[1]) for k in items if (item := self._live(k)) is not None}

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
