"""A cache pool in this process's memory, with memcached's semantics: the embedded default's
pools, and scripts'."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .pools import PoolStats


class LocalMemory:
    """What a memcached server holds, in process memory: pools made on one ``LocalMemory``
    share it as pools on one server do (a read across them is one operation, a ``clear``
    empties them all)."""

    def __init__(self) -> None:
        self.items: dict[str, tuple[bytes, int, float]] = {}  # value, cas token, expires at
        self.next_token = 0
        self.lock = threading.Lock()

    def live(self, key: str) -> tuple[bytes, int, float] | None:
        item = self.items.get(key)
        if item is not None and item[2] and item[2] < time.monotonic():
            del self.items[key]
            return None
        return item

    def store(self, key: str, value: bytes, expire: int) -> None:
        self.next_token += 1
        expires = time.monotonic() + expire if expire else 0.0
        self.items[key] = (bytes(value), self.next_token, expires)

    def fetch(self, keys: Sequence[str]) -> dict[str, bytes]:
        with self.lock:
            return {k: item[0] for k in keys if (item := self.live(k)) is not None}

    def fetch_tokens(self, keys: Sequence[str]) -> dict[str, tuple[bytes, Any]]:
        with self.lock:
            return {k: (item[0], item[1]) for k in keys if (item := self.live(k)) is not None}

    def claim(self, items: Mapping[str, bytes], expire: int) -> dict[str, tuple[bytes, Any]]:
        with self.lock:
            for key, value in items.items():
                if self.live(key) is None:
                    self.store(key, value, expire)
            return {k: (item[0], item[1]) for k in items if (item := self.live(k)) is not None}

    def cas(self, key: str, value: bytes, token: Any, expire: int) -> bool:
        with self.lock:
            item = self.live(key)
            if item is None or item[1] != token:
                return False
            self.store(key, value, expire)
            return True


class LocalPool:
    """memcached's semantics in this process's memory (thread-safe; expiry honoured), in a
    ``LocalMemory`` of its own unless given one to share."""

    def __init__(self, name: str, memory: LocalMemory | None = None) -> None:
        self.name = name
        self.stats = PoolStats(name)
        self.memory = memory or LocalMemory()

    def homes(self, keys: Sequence[str]) -> dict[Any, list[str]]:
        return {self.memory: list(keys)} if keys else {}

    def fetch(self, home: Any, keys: Sequence[str]) -> dict[str, bytes]:
        memory: LocalMemory = home
        return memory.fetch(keys)

    def fetch_tokens(self, home: Any, keys: Sequence[str]) -> dict[str, tuple[bytes, Any]]:
        memory: LocalMemory = home
        return memory.fetch_tokens(keys)

    def claim(
        self, home: Any, items: Mapping[str, bytes], expire: int
    ) -> dict[str, tuple[bytes, Any]]:
        memory: LocalMemory = home
        return memory.claim(items, expire)

    def fill(self, home: Any, items: Sequence[tuple[str, bytes, Any, int]]) -> None:
        memory: LocalMemory = home
        for key, value, token, expire in items:
            memory.cas(key, value, token, expire)

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]:
        if not keys:
            return {}
        self.stats.call()
        found = self.memory.fetch(keys)
        self.stats.looked_up(len(found), len(keys) - len(found))
        return found

    def gets_many(self, keys: Sequence[str]) -> dict[str, tuple[bytes, Any]]:
        self.stats.call()
        return self.memory.fetch_tokens(keys)

    def add(self, key: str, value: bytes, expire: int) -> bool:
        memory = self.memory
        with memory.lock:
            self.stats.call()
            if memory.live(key) is not None:
                return False
            memory.store(key, value, expire)
            return True

    def cas(self, key: str, value: bytes, token: Any, expire: int) -> bool:
        self.stats.call()
        return self.memory.cas(key, value, token, expire)

    def append(self, key: str, value: bytes) -> bool:
        memory = self.memory
        with memory.lock:
            self.stats.call()
            item = memory.live(key)
            if item is None:
                return False
            memory.next_token += 1
            memory.items[key] = (item[0] + value, memory.next_token, item[2])
            return True

    def delete_many(self, keys: Iterable[str]) -> None:
        memory = self.memory
        with memory.lock:
            self.stats.call()
            for key in keys:
                memory.items.pop(key, None)

    def clear(self) -> None:
        with self.memory.lock:
            self.memory.items.clear()
