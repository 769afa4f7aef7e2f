"""How many of a process's threads one host may hold at once: a bulkhead.

A host that hangs (a master whose commits wait for an acknowledgement that does not come,
or one cut off, each statement waiting out the read timeout) keeps every thread that
reaches it until then. Without a bound it soon holds them all, and pages that never touch
it wait too. With one, a host holds at most ``limit`` sessions of the process; a thread
that finds none free waits ``wait`` seconds for one, then gives up with the shard
unavailable (a 503), and the other threads go on serving the other hosts. Writes take at
most ``limit - 1`` of them: a master whose commits hang leaves one to the reads of its
shards, which do not wait for an acknowledgement. A write is a session taken for one, or
an autocommit write statement in a session taken for reads, for as long as it runs.

A thread counts once however many sessions it nests on the host (a read inside a write),
so nesting never waits on itself.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..exceptions import ShardUnavailable

#: Seconds a thread waits for a free session on a host before giving up on it: a session
#: of a healthy host lasts milliseconds, so only a host that holds its share waits this.
WAIT = 1.0


class Bulkhead:
    def __init__(self, host: str, limit: int, wait: float = WAIT) -> None:
        self.host, self.limit, self.wait = host, limit, wait
        self._free = threading.BoundedSemaphore(limit)
        self.write_limit = max(1, limit - 1)
        self._writes = threading.BoundedSemaphore(self.write_limit)
        self._held = threading.local()

    def enter(self, shard_id: int, *, write: bool = False) -> None:
        """Take a session on the host for this thread, or raise ShardUnavailable."""
        depth = getattr(self._held, "depth", 0)
        if depth == 0:
            if write and not self._writes.acquire(timeout=self.wait):
                raise self._busy(shard_id, "writes")
            if not self._free.acquire(timeout=self.wait):
                if write:
                    self._writes.release()
                raise self._busy(shard_id, "sessions")
            self._held.writing = write
            self._held.placeless = False
        self._held.depth = depth + 1

    def leave(self) -> None:
        self._held.depth -= 1
        if self._held.depth == 0:
            if not self._held.placeless:
                self._free.release()
            if self._held.writing:
                self._writes.release()

    @contextmanager
    def writing(self, shard_id: int) -> Iterator[None]:
        """One autocommit write statement in a session this thread took for reads: it
        holds one of the host's write places while it runs (its commit may wait as long
        as a transaction's). It waits for that place holding no session's place, then
        takes one again (the order ``enter`` takes them in): a thread waiting for a write's
        place must not keep the host's last session from its reads."""
        if self._held.writing:  # already a write's place
            yield
            return
        if self._held.placeless:  # a write before gave its session's place up in vain
            raise self._busy(shard_id, "sessions")
        self._free.release()
        writes = self._writes.acquire(timeout=self.wait)
        self._held.placeless = not self._free.acquire(timeout=self.wait)
        if not writes or self._held.placeless:
            if writes:
                self._writes.release()
            raise self._busy(shard_id, "sessions" if writes else "writes")
        self._held.writing = True
        try:
            yield
        finally:
            self._held.writing = False
            self._writes.release()

    def _busy(self, shard_id: int, what: str) -> ShardUnavailable:
        limit = self.limit if what == "sessions" else self.write_limit
        return ShardUnavailable(
            shard_id, self.host, f"busy: {limit} {what} of this process wait on the host already"
        )
