"""The write fence: a process writes a shard only on the host that the shard map in force
names as its master, and never while the shard is in a move's read-only window.

Requests and tasks are pinned to the map they started with (``Store.pinned``), so
one that began before a failover was published still routes by the old map. So
every write is admitted here against the map in force *now*, and refused with
``ShardReadOnly`` (nothing written; retry) if that map no longer allows it. A write
that meets a split's read-only window (``ShardMoving``) may instead ``hold``: wait,
briefly, for the map that ends the window, then go to the shard's new master; that
spares its user a refusal and a retry for a window that lasts a second or two. And
after a swap, ``drain`` returns only when the writes admitted before have finished:
once a process has swapped in a version (and reported it to the control plane,
see ``control.follower``), none of its writes that the version forbids is still
in flight. A split's read-only window relies on exactly that.

A process cut off from its config source goes on writing by the last map it saw (its
local copy's, if it started from that): it may have missed a new map, but every
operation that moves a shard's master fences the old master in MySQL itself (a planned
failover's ``read_only``, a split's or revert's grants, an emergency failover's fence
command), so a write by an old map fails there, never lands where the shard no longer
lives. A read-only window in the map it has goes on refusing. (Its Redis writes do stop
past its lease: a Redis move has no other fence, see ``redis_shards``; so do its cache
fills, see ``cache.readthrough``. Its reads of a copy a revert left frozen fail in MySQL:
``control.grant_fence.take_reads``.)
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable

from .exceptions import ShardMoving, ShardReadOnly
from .topology import Topology

log = logging.getLogger(__name__)

#: How long a swap waits for the writes admitted under the old map.
DRAIN_SECONDS = 10.0
#: How long a write waits for a read-only window to end before it is refused.
HOLD_SECONDS = 3.0
#: How many writes of a process may wait at once; more are refused at once, so that a
#: long window cannot take every thread of a process.
HOLD_LIMIT = 16


class WriteFence:
    """Admits each write by the shard map in force (``in_force()``), and drains old ones."""

    def __init__(
        self, in_force: Callable[[], Topology], *, hold_seconds: float = HOLD_SECONDS
    ) -> None:
        self._in_force = in_force
        self.hold_seconds = hold_seconds
        self._changed = threading.Condition()
        self._generation = 0
        self._holding = 0
        self._in_flight: Counter[int] = Counter()  # admitted writes by generation

    def admit(self, shard_id: int, host: str) -> int:
        """Let a write to ``shard_id`` on ``host`` start, or raise ShardReadOnly. Returns a
        ticket for ``done``."""
        with self._changed:
            topology = self._in_force()
            master = topology.master_of(shard_id)
            if master != host:
                raise ShardReadOnly(
                    shard_id, host, f"shard map v{topology.version} names {master} its master"
                )
            if topology.is_read_only(shard_id):
                raise ShardMoving(
                    shard_id, host, f"read-only while it moves (shard map v{topology.version})"
                )
            self._in_flight[self._generation] += 1
            return self._generation

    def hold(self, shard_id: int) -> bool:
        """Wait until the map in force no longer has ``shard_id`` in a read-only window.
        False if it still had after ``hold_seconds``, or if too many writes wait already."""
        with self._changed:
            if self._holding >= HOLD_LIMIT:
                return False
            self._holding += 1
            try:
                return self._changed.wait_for(
                    lambda: not self._in_force().is_read_only(shard_id), self.hold_seconds
                )
            finally:
                self._holding -= 1

    def done(self, ticket: int) -> None:
        """The write admitted with ``ticket`` has committed or rolled back."""
        with self._changed:
            self._in_flight[ticket] -= 1
            if self._in_flight[ticket] <= 0:
                del self._in_flight[ticket]
                self._changed.notify_all()

    def drain(self, *, seconds: float | None = None) -> bool:
        """Call after swapping in a map: wait until no write admitted before is in flight.
        Returns False if some still were after ``seconds`` (``DRAIN_SECONDS``)."""
        seconds = DRAIN_SECONDS if seconds is None else seconds
        with self._changed:
            self._generation += 1
            generation = self._generation
            self._changed.notify_all()  # the writes on hold look at the new map
            drained = self._changed.wait_for(
                lambda: all(g >= generation for g in self._in_flight), seconds
            )
        if not drained:
            version = self._in_force().version
            log.warning("shard map v%s: writes under the old map still in flight", version)
        return drained
