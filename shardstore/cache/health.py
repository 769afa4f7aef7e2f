"""Whether a memcached server may serve, and the invalidations it missed while it could not.

A cache server that stops answering (crashed, restarted, cut off by the network)
is a miss for every key it holds: reads go to MySQL, fills are dropped, and no
error reaches the page. Its keys are not rerouted to another server meanwhile:
a copy written there would go stale the day the keys route home again, with
nothing to invalidate it.

What the outage must not do is lose invalidations. A writer commits to MySQL,
then deletes (or appends to) the cached keys; if the server cannot be reached,
that delete is lost, and a server that was only cut off (not restarted: a
restarted memcached is empty) would serve the value it made stale once it
answers again. So this process records the keys whose invalidation did not
land on a server, and before that server serves again it deletes them there
(the replay), then puts the server back in service. Invalidations made while
the replay runs are recorded too and replayed in turn; the server is back only
when nothing is left to replay, checked under the same lock that records.

Why replay rather than flush the returning server: a server is shared by every
pool that names it and by users' sessions, and one web process's network blip
(a timeout under load) would otherwise empty it for everyone and log users
out. The replay deletes only what this process could not. Past ``max_missed``
keys (a long outage under heavy writes) the record stops growing and the server
is flushed instead: after that long, emptying it is the cheaper certainty.

Each process keeps its own record, in a registry by server address shared by
all its pools (and kept when a new caches document swaps the pools). Limits: a
process that dies while it holds a record takes it along (only a server that
was cut off, not restarted, still holds what it missed); and a process that
could still reach a server another one could not may read a value the other
one failed to invalidate, until that one replays it (at its next retry, every
``retry_seconds``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: How long a server that failed is left alone before it is tried (and replayed) again.
RETRY_SECONDS = 1.0
#: Missed keys recorded per server; past this, the returning server is flushed instead.
MAX_MISSED = 100_000
#: Keys deleted per round trip of a replay (the replies must not fill the socket).
REPLAY_BATCH = 500
#: Replay rounds run outside the lock before the last one is run under it.
REPLAY_ROUNDS = 8


@dataclass
class HealthStats:
    failures: int = 0  # commands that failed (each marks the server down)
    skipped: int = 0  # commands not sent because the server was down
    probes: int = 0  # attempts to bring the server back
    replayed: int = 0  # missed keys deleted on the server when it came back
    flushes: int = 0  # times it was flushed instead (too much missed)

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


class ServerHealth:
    """One memcached server's standing in this process: up, or down with what it missed."""

    def __init__(
        self,
        address: str,
        *,
        retry_seconds: float = RETRY_SECONDS,
        max_missed: int = MAX_MISSED,
    ) -> None:
        self.address = address
        self.retry_seconds = retry_seconds
        self.max_missed = max_missed
        self.stats = HealthStats()
        self._lock = threading.Lock()
        self._up = True
        self._probing = False
        self._tried_at = 0.0  # when it last failed, or a retry failed
        self._missed: set[str] = set()
        self._flush = False

    @property
    def up(self) -> bool:
        return self._up

    def pending(self) -> int:
        """How many missed keys wait for the replay."""
        with self._lock:
            return len(self._missed)

    def admit(self, client: Any, invalidates: Iterable[str] = ()) -> bool:
        """Whether this thread may send the server a command now.

        Yes when it is up. When it is down and its retry is due, this thread tries
        to bring it back first (the replay, through ``client``). When the answer is
        no, the keys the command would have invalidated are recorded for the replay.
        """
        with self._lock:
            if self._up:
                return True
            due = not self._probing and time.monotonic() >= self._tried_at + self.retry_seconds
            if not due:
                self.stats.skipped += 1
                self._record(invalidates)
                return False
            self._probing = True
        if self._bring_back(client):
            return True
        with self._lock:
            self.stats.skipped += 1
            self._record(invalidates)
        return False

    def flush_on_return(self) -> None:
        """Empty the server before it serves again (it missed a flush of its pool)."""
        with self._lock:
            self._missed.clear()
            self._flush = True

    def failed(self, invalidates: Iterable[str] = ()) -> None:
        """A command failed: down until the next retry. ``invalidates`` are the keys it
        was to delete or append to (whether or not it landed, they are replayed)."""
        with self._lock:
            self.stats.failures += 1
            self._record(invalidates)
            if self._up:
                self._up = False
                self._tried_at = time.monotonic()

    def _record(self, keys: Iterable[str]) -> None:
        if self._flush:
            return  # a flush will cover them
        self._missed.update(keys)
        if len(self._missed) > self.max_missed:
            self._missed.clear()
            self._flush = True

    def _bring_back(self, client: Any) -> bool:
        """Replay what was missed, round after round, then mark the server up."""
        self.stats.probes += 1
        client.close()  # a connection from before the outage is dead: start afresh
        missed: set[str] = set()
        flush = answered = False
        try:
            for _round in range(REPLAY_ROUNDS):
                with self._lock:
                    missed, flush = self._take()
                    if answered and not missed and not flush:
                        self._mark_up()
                        return True
                self._replay(client, missed, flush)
                missed, flush, answered = set(), False, True
        except Exception:  # noqa: BLE001 - still unreachable: down until the next retry
            with self._lock:
                self._still_down(missed, flush)
            return False
        with self._lock:  # records keep coming: the last round holds them off
            missed, flush = self._take()
            try:
                self._replay(client, missed, flush)
            except Exception:  # noqa: BLE001 - as above
                self._still_down(missed, flush)
                return False
            self._mark_up()
            return True

    def _take(self) -> tuple[set[str], bool]:
        missed, self._missed = self._missed, set()
        flush, self._flush = self._flush, False
        return missed, flush

    def _replay(self, client: Any, missed: set[str], flush: bool) -> None:
        if flush:
            client.flush_all(noreply=False)
            self.stats.flushes += 1
            return
        if not missed:
            client.version()  # nothing to replay: only whether it answers
            return
        keys = sorted(missed)
        for start in range(0, len(keys), REPLAY_BATCH):
            client.delete_many(keys[start : start + REPLAY_BATCH], noreply=False)
        self.stats.replayed += len(keys)

    def _still_down(self, missed: set[str], flush: bool) -> None:
        """(Under the lock.) The replay failed: keep what it was to do, retry later."""
        self._flush = self._flush or flush
        self._record(missed)
        self._tried_at = time.monotonic()
        self._probing = False

    def _mark_up(self) -> None:
        self._up = True
        self._probing = False


_registry: dict[str, ServerHealth] = {}
_registry_lock = threading.Lock()


def health_of(address: str) -> ServerHealth:
    """The standing of the server at ``address`` (``host:port``) in this process."""
    with _registry_lock:
        health = _registry.get(address)
        if health is None:
            health = _registry[address] = ServerHealth(address)
        return health


def forget(address: str) -> None:
    """A new server now answers at ``address`` (a replaced host, a test's own server on a
    port another used before): nothing known of the old one applies to it."""
    with _registry_lock:
        _registry.pop(address, None)
