"""A small thread-safe pool of idle connections, keyed by where they lead.

MySQL keys connections by host; SQLite by shard file. One cap bounds the idle
connections across all keys (4096 SQLite shards must not hold 4096 files open),
evicting the least recently used key first.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


class ConnectionPool:
    def __init__(self, connect: Callable[[Any], Any], *, max_idle: int) -> None:
        self._connect = connect
        self._max_idle = max_idle
        self._idle: OrderedDict[Hashable, list[Any]] = OrderedDict()
        self._count = 0
        self._lock = threading.Lock()

    def acquire(self, key: Hashable) -> tuple[Any, bool]:
        """An idle connection for ``key`` (reused=True), or a new one (connecting outside the lock)."""
        with self._lock:
            idle = self._idle.get(key)
            if idle:
                self._count -= 1
                connection = idle.pop()
                if not idle:
                    del self._idle[key]
                return connection, True
        return self._connect(key), False

    def clear(self, key: Hashable) -> None:
        """Close the idle connections of one key (after one of them was found dead)."""
        with self._lock:
            idle = self._idle.pop(key, [])
            self._count -= len(idle)
        for connection in idle:
            discard(connection)

    def release(self, key: Hashable, connection: Any) -> None:
        """Give a healthy connection back for reuse."""
        evicted = []
        with self._lock:
            self._idle.setdefault(key, []).append(connection)
            self._idle.move_to_end(key)
            self._count += 1
            while self._count > self._max_idle:
                oldest_key, oldest = next(iter(self._idle.items()))
                evicted.append(oldest.pop(0))
                self._count -= 1
                if not oldest:
                    del self._idle[oldest_key]
        for stale in evicted:
            discard(stale)

    def close(self) -> None:
        """Close every idle connection (connections in use are closed on release by their owner)."""
        with self._lock:
            idle = [c for conns in self._idle.values() for c in conns]
            self._idle.clear()
            self._count = 0
        for connection in idle:
            discard(connection)


def discard(connection: Any) -> None:
    """Close a connection that is broken or no longer wanted, ignoring errors."""
    with contextlib.suppress(Exception):  # it is being thrown away
        connection.close()
