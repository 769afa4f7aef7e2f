"""Writes refused at once on a host whose commits wait for an acknowledgement no replica
sends.

A master with no replica acknowledging takes no write under the strict durability policy:
each commit waits, the site gives up at its read timeout and ends the session on the
server (``MySQLBackend.abandon``). Every thread that writes there would wait out that
timeout, up to the host's share of the process (its bulkhead), and the reads of the host's
shards would wait for a free place behind them. So once a write was given up on while it
waited for an acknowledgement, the host's writes are refused at once (the shard
unavailable: a 503 with Retry-After) for ``HOLD`` seconds; then one write is let through
to try (while it runs, the others are still refused): committed, the host takes writes
again; given up on too, they are refused for ``HOLD`` more. So while no replica
acknowledges, a process holds one thread on the host at a time, not its whole share.

(The master cannot be asked instead: it counts a replica that went away among those that
acknowledge until it next sends that replica something.)
"""

from __future__ import annotations

import threading
import time

#: Seconds a host's writes are refused once one waited in vain for an acknowledgement.
HOLD = 5.0


class AcknowledgementWatch:
    """Whether a host's writes are refused now; ``trying``: the longest a write let
    through to try may take (the read timeout), after which another may."""

    def __init__(self, trying: float, hold: float | None = None) -> None:
        self._trying, self._hold = trying, HOLD if hold is None else hold
        self._refused_until = 0.0
        self._try_until = 0.0  # a write let through to try runs until then at the latest
        self._waiting = False
        self._lock = threading.Lock()

    def given_up(self) -> None:
        """A write was given up on while it waited for an acknowledgement."""
        with self._lock:
            self._waiting = True
            self._refused_until = time.monotonic() + self._hold
            self._try_until = 0.0

    def committed(self) -> None:
        """A write was committed: acknowledged, so the host takes writes again."""
        if self._waiting:
            with self._lock:
                self._waiting = False

    def refuses(self) -> bool:
        """Whether a write is refused now (if not while writes wait, it is the one to try)."""
        if not self._waiting:  # every write asks: no lock while the host acknowledges
            return False
        with self._lock:
            if not self._waiting:
                return False
            now = time.monotonic()
            if now < self._refused_until or now < self._try_until:
                return True
            self._try_until = now + self._trying
            return False
