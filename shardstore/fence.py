"""The write fence: a process writes a shard only on the host that the shard map in force
names as its master, and never while the shard is in a move's read-only window.

Requests and tasks are pinned to the map they started with (``Store.pinned``), so
one that began before a failover was published still routes by the old map. So
every write is admitted here against the map in force *now*, and refused with
``ShardReadOnly`` (nothing written; retry) if that map no longer allows it. And
after a swap, ``drain`` returns only when the writes admitted before have finished:
once a process has swapped in a version (and reported it to the control plane,
see ``control.follower``), none of its writes that the version forbids is still
in flight. A split's read-only window relies on exactly that.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable

from .exceptions import ShardReadOnly
from .topology import Topology

log = logging.getLogger(__name__)

#: How long a swap waits for the writes admitted under the old map.
DRAIN_SECONDS = 10.0


class WriteFence:
    """Admits each write by the shard map in force (``in_force()``), and drains old ones."""

    def __init__(self, in_force: Callable[[], Topology]) -> None:
        self._in_force = in_force
        self._changed = threading.Condition()
        self._generation = 0
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
            if topology.read_only and topology.is_read_only(shard_id):
                raise ShardReadOnly(
                    shard_id, host, f"read-only while it moves (shard map v{topology.version})"
                )
            self._in_flight[self._generation] += 1
            return self._generation

    def done(self, ticket: int) -> None:
        """The write admitted with ``ticket`` has committed or rolled back."""
        with self._changed:
            self._in_flight[ticket] -= 1
            if self._in_flight[ticket] <= 0:
                del self._in_flight[ticket]
                self._changed.notify_all()

    def drain(self, *, seconds: float = DRAIN_SECONDS) -> bool:
        """Call after swapping in a map: wait until no write admitted before is in flight.
        Returns False if some still were after ``seconds``."""
        with self._changed:
            self._generation += 1
            generation = self._generation
            drained = self._changed.wait_for(
                lambda: all(g >= generation for g in self._in_flight), seconds
            )
        if not drained:
            version = self._in_force().version
            log.warning("shard map v%s: writes under the old map still in flight", version)
        return drained
