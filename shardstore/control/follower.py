"""One process following the config documents live, with a last-known-good copy on disk.

A web or worker process starts a ``ConfigFollower`` on its source. At start
it reads each document from the source and mirrors it to a local directory
(readable by its user alone: files mode 0600, in a 0700 directory);
if the source is unreachable (ZooKeeper down at boot) it starts from that
mirror instead, as Pinterest's config tools kept ZooKeeper mirrored in local
files. Then it watches: each new version is validated, mirrored, and handed to
``on_change``, which swaps it in. While the source is unreachable the process
keeps serving with the last version it saw; it logs that once, reports it in
``status()`` (the console shows it), and recovers by itself when the source
answers again (kazoo reconnects; the source reads each document again).

After each change has been swapped in, the process reports the versions it
has in force to the source (``ConfigSource.report``), so an operation can wait
until no process acts on an older map; and again every ``HEARTBEAT_SECONDS``,
which renews its lease. A process that has not reached its source for
``LEASE_SECONDS`` may have missed a new map: ``lease()`` then says so (and
``status().cut_off``), and its Redis writes are refused (``RedisShards``) until
the source answers again, since a move of Redis virtual shards has no other
fence; nor does it fill the caches (``CachedStore``), so what it reads by a map
it cannot confirm reaches no other process. Its MySQL reads and writes go on by
the last shard map it saw: every operation that moves a shard's master fences the
old master in MySQL itself (``fence``), so a ZooKeeper outage costs no MySQL write
while no operation runs. An operation waits on every process that reported within
its lease, so none that may still write to Redis by an older map is forgotten.

A process that started from its mirror and has not reached its source since is cut
off from the start, on the same terms: MySQL by the mirror's map, no Redis writes,
no cache fills.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .. import metrics
from ..exceptions import InvalidTopology, WritesInFlight
from . import documents
from .config_source import (
    HEARTBEAT_SECONDS,
    LEASE_SECONDS,
    ConfigError,
    ConfigSource,
    NotPublished,
    Revision,
    SourceUnavailable,
    write_private,
)

log = logging.getLogger(__name__)

OnChange = Callable[[Revision], None]
#: How often a process that started from its local copy tries the source again.
RECONNECT_SECONDS = 1.0


@dataclass(frozen=True)
class FollowerStatus:
    source: str
    connected: bool  # the source answered at start, and has not been lost since
    versions: dict[str, int]  # the version in force of each document
    from_mirror: tuple[str, ...]  # documents loaded from the local copy at start
    #: Why its lease is over (``ConfigFollower.lease``), None while it holds: it serves
    #: MySQL reads and writes by the last map it saw, refuses Redis writes, fills no cache.
    cut_off: str | None


class ConfigFollower:
    """The documents in force in this process, kept current from a source."""

    def __init__(
        self,
        open_source: Callable[[], ConfigSource],
        mirror_dir: str | Path,
        names: Iterable[str] = documents.NAMES,
        *,
        on_change: OnChange | None = None,
        process: str | None = None,
    ) -> None:
        self._open_source = open_source
        #: This process's name in the source's list of followers.
        self.process = process or f"{socket.gethostname()}-{os.getpid()}"
        self.mirror_dir = Path(mirror_dir)
        self.names = tuple(documents.check_name(n) for n in names)
        self._on_change = on_change
        self._lock = threading.Lock()
        self._current: dict[str, Revision] = {}
        self._from_mirror: list[str] = []
        self._source: ConfigSource | None = None
        self._description = "(not started)"
        self._lost_logged = False
        self._closed = threading.Event()
        #: When this process last reached its source (monotonic, taken before the report
        #: that did): its lease runs from there. None until it has.
        self._reached: float | None = None

    # -- start ----------------------------------------------------------------

    def start(self) -> FollowerStatus:
        """Load every document (from the source, or else the mirror), then watch."""
        if not self._connect(notify=False):
            for name in self.names:
                self._load_mirror(name)
            threading.Thread(target=self._reconnect, name="config-reconnect", daemon=True).start()
        threading.Thread(target=self._heartbeat, name="config-heartbeat", daemon=True).start()
        return self.status()

    def lease(self) -> str | None:
        """Why this process may have missed a new map (its lease is over: it has not
        reached its source for ``LEASE_SECONDS``, or not since it started), or None.
        While it gives a reason the process writes no Redis instance (``RedisShards``)."""
        with self._lock:
            reached = self._reached
        if reached is None:
            return "the config source has not answered since this process started"
        away = time.monotonic() - reached
        if away > LEASE_SECONDS:
            return f"the config source has not answered for {away:.0f}s (lease {LEASE_SECONDS:g}s)"
        return None

    def _heartbeat(self) -> None:
        while not self._closed.wait(HEARTBEAT_SECONDS):
            self._report()

    def _connect(self, *, notify: bool) -> bool:
        """Open the source, take each document's current version and watch it."""
        try:
            source = self._open_source()
        except SourceUnavailable as exc:
            self._note_lost(exc)
            return False
        try:
            revisions = []
            for name in self.names:
                try:
                    revisions.append(source.current(name))
                except NotPublished:
                    continue  # the deployment does not use this document (yet)
            for revision in revisions:
                self._accept(revision, notify=notify)
            for name in self.names:
                source.watch(name, self._accept)
            reaching = time.monotonic()
            source.report(self.process, self.status().versions)
            with self._lock:
                self._reached = reaching
            metrics.source_reached(source.description)
        except SourceUnavailable as exc:
            source.close()
            self._note_lost(exc)
            return False
        with self._lock:
            self._source, self._description = source, source.description
            recovered, self._lost_logged = self._lost_logged, False
        if recovered:
            log.warning("config source %s reachable again", source.description)
        self._listen_for_connection(source)
        return True

    def _reconnect(self) -> None:
        while not self._closed.wait(RECONNECT_SECONDS):
            if self._connect(notify=True):
                return

    def current(self, name: str) -> Revision | None:
        """The revision in force (None if the document was never published)."""
        with self._lock:
            return self._current.get(name)

    def status(self) -> FollowerStatus:
        cut_off = self.lease()
        with self._lock:
            return FollowerStatus(
                self._description,
                self._source is not None and not self._lost_logged,
                {name: r.version for name, r in self._current.items()},
                tuple(self._from_mirror),
                cut_off,
            )

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        if self._source is not None:
            with contextlib.suppress(SourceUnavailable):
                self._source.withdraw(self.process)
            self._source.close()

    # -- changes --------------------------------------------------------------

    def _accept(self, revision: Revision, *, notify: bool = True) -> None:
        try:
            documents.validate(revision.name, revision.document)
        except InvalidTopology as exc:  # published around the validator: keep the old one
            log.error("config %s v%s refused: %s", revision.name, revision.version, exc)
            return
        with self._lock:
            held = self._current.get(revision.name)
            if held is not None and held.version >= revision.version:
                return  # an old notification, or one already applied
            self._current[revision.name] = revision
        self._mirror(revision)
        if notify and self._on_change is not None:
            try:
                self._on_change(revision)
            except WritesInFlight as exc:
                # Not reported: an operation waiting for every process to follow this
                # version stops (and undoes) rather than go on past writes in flight.
                log.error("config %s v%s: %s", revision.name, revision.version, exc)
                return
        self._report()

    def _report(self) -> None:
        with self._lock:
            source = self._source
        if source is None:
            return  # not connected yet: _connect reports once it is
        reaching = time.monotonic()
        try:
            source.report(self.process, self.status().versions)
        except SourceUnavailable as exc:
            self._note_lost(exc)
            return
        with self._lock:
            self._reached = reaching
        metrics.source_reached(source.description)

    def _mirror(self, revision: Revision) -> None:
        self.mirror_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self.mirror_dir / f"{revision.name}.json"
        write_private(path, json.dumps(revision.as_json(), sort_keys=True))

    def _load_mirror(self, name: str) -> None:
        path = self.mirror_dir / f"{name}.json"
        try:
            revision = Revision.from_json(json.loads(path.read_text()))
            documents.validate(name, revision.document)
        except FileNotFoundError:
            return
        except (OSError, ValueError, KeyError, ConfigError, InvalidTopology) as exc:
            log.error("config %s: the local copy %s is unusable: %s", name, path, exc)
            return
        with self._lock:
            self._current[name] = revision
            self._from_mirror.append(name)
        log.warning("config %s: serving the local copy, version %s", name, revision.version)

    # -- connection state -----------------------------------------------------

    def _note_lost(self, reason: object) -> None:
        with self._lock:
            first, self._lost_logged = not self._lost_logged, True
        if first:  # once per outage, not once per request
            log.warning("config source unreachable, keeping the last version seen: %s", reason)

    def _listen_for_connection(self, source: ConfigSource) -> None:
        client = getattr(source, "client", None)  # ZooKeeper: follow the session's state
        if client is None:
            return
        from kazoo.client import KazooState

        def listener(state: str) -> None:
            if self._closed.is_set():
                return  # its own close, not an outage
            if state in (KazooState.LOST, KazooState.SUSPENDED):
                self._note_lost(f"ZooKeeper connection {state.lower()}")
            elif state == KazooState.CONNECTED:
                # Report again: a new session lost our ephemeral entry. (In a thread:
                # a listener must not block kazoo's.)
                threading.Thread(target=self._report, name="config-report", daemon=True).start()
                if self._lost_logged:
                    with self._lock:
                        self._lost_logged = False
                    log.warning("config source %s reachable again", source.description)

        client.add_listener(listener)
