"""The fleet's figures, read at each scrape of a Celery worker's ``/metrics``: the depth
of each task queue, every MySQL host of the shard map as the console probes it
(reachable, replicating, lag, semi-sync), each pair's health, and the operations left
open in the journal.

Replication is read for every stream a host runs, its default connection and its named
ones (MariaDB's multi-source: a split's reverse stream, ``connection="revert_split9"``),
each judged as ``shardstore pairs`` judges it. A master's commits waiting for an
acknowledgement are counted, and so is a host the map names master that is read-only
(a restarted master no one has reopened: ``shardstore reopen``).

They are asked of the fleet, not counted by a process, so one process asks and only
when scraped: the worker's main process (``pinboard.celery``). A part that cannot be
read is left out of that scrape, and logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.db import connection
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from shardstore.control import backup_records, guard
from shardstore.control.decision import Decision
from shardstore.control.pairs import judge

from ..data_plane import plane
from . import positions
from .models import JournalEntry
from .queries import config
from .queries.probes import Probe, probe

log = logging.getLogger(__name__)


#: Every family this collector makes: its help and its labels.
FAMILIES: dict[str, tuple[str, list[str]]] = {
    "pinboard_queue_depth": ("Tasks waiting in each Celery queue.", ["queue"]),
    "pinboard_mysql_up": ("1: the host answers.", ["host"]),
    "pinboard_mysql_replication_running": (
        "1: the stream's IO and SQL threads both run (connection \"\": the default one).",
        ["host", "source", "connection"],
    ),
    "pinboard_mysql_replication_lag_seconds": (
        "Seconds a stream is behind its source (absent while it does not apply).",
        ["host", "source", "connection"],
    ),
    "pinboard_mysql_stream_healthy": (
        "1: a named stream (a split's reverse stream) runs, in time, from a host of the map,"
        " filtered as it should be (shardstore pairs).", ["host", "source", "connection"],
    ),
    "pinboard_mysql_semi_sync_replicas": (
        "Replicas acknowledging the master's commits now (semi-sync on).", ["host"],
    ),
    "pinboard_mysql_semi_sync_degraded": (
        "1: the master commits asynchronously, no replica having acknowledged within its"
        " durability's wait (degrade-after N); 0: its commits wait for one.", ["host"],
    ),
    "pinboard_mysql_semi_sync_wait_sessions": (
        "Sessions whose commit waits for a replica's acknowledgement now.", ["host"],
    ),
    "pinboard_mysql_semi_sync_acknowledged": (
        "Commits a replica has acknowledged since the server started (Rpl_semi_sync_master_yes_tx).",
        ["host"],
    ),
    "pinboard_mysql_master_read_only": (
        "1: the map names the host a master and it is read-only (0: writable).", ["host"],
    ),
    "pinboard_mysql_pair_healthy": (
        "1: the master and every replica it names are healthy (the console's pair check);"
        " replicas: their names, comma-separated.", ["master", "replicas"],
    ),
    "pinboard_mysql_under_replicated": (
        "1: the master has fewer healthy replicas than a range should have (replicas.WANTED).",
        ["master"],
    ),
    "pinboard_guard_paused": ("1: the guard is paused (dead masters wait for a person).", []),
    "pinboard_guard_pass_age_seconds": (
        "Seconds since the active guard's last pass over the map (absent: none ever ran).", [],
    ),
    "pinboard_guard_decision_age_seconds": (
        "Seconds since the guard's newest decision about each host, by its kind: a master's"
        " (failover, refused, ambiguous, paused, cooling-down, failed, resumed; adding,"
        " added, add-refused, add-failed, add-paused a replica) or a replica's (replacing,"
        " replaced, replace-refused, replace-failed, replace-paused, replace-cooling-down).",
        ["host", "kind"],
    ),
    "pinboard_guard_decisions": (
        "Decisions the guard has made, by kind (a decision made again at each pass counts"
        " once): failovers, replacements and additions, and those refused or failed.", ["kind"],
    ),
    "pinboard_guard_detection_seconds": (
        "Of the guard's newest recovery of each host: seconds from the first sign of the"
        " failure to the decision.", ["host", "kind"],
    ),
    "pinboard_guard_recovery_seconds": (
        "Of the guard's newest recovery of each host: seconds its run took (the failover,"
        " or the replacement's rebuild).", ["host", "kind"],
    ),
    "pinboard_backup_age_seconds": ("Seconds since the range's newest backup ended.", ["range"]),
    "pinboard_backup_bytes": ("The range's newest backup's size, compressed.", ["range"]),
    "pinboard_binlog_archive_lag_seconds": (
        "Seconds since the master's binary-log archive last held everything it had logged"
        " (grows while the archiver is behind, or stopped).", ["host"],
    ),
    "pinboard_backup_verified": (
        "1: the range's last backup verification passed (restored, caught up, compared with"
        " its master); 0: it failed.", ["range"],
    ),
    "pinboard_backup_verified_age_seconds": ("Seconds since the range's last verification.", ["range"]),
    "pinboard_open_operations": ("Operations running or left open, by kind.", ["operation"]),
    "pinboard_open_operation_age_seconds": (
        "How long the oldest open operation of each kind has been open.", ["operation"],
    ),
}  # fmt: skip


def family(name: str) -> GaugeMetricFamily:
    """An empty family of ``FAMILIES``."""
    help_text, labels = FAMILIES[name]
    return GaugeMetricFamily(name, help_text, labels=labels)


class FleetCollector(Collector):
    def __init__(self, app: Any) -> None:
        self.app = app

    def describe(self) -> Iterator[Metric]:
        return (family(name) for name in FAMILIES)

    def collect(self) -> Iterator[Metric]:
        parts: list[Callable[[], list[Metric]]] = [
            self.queues,
            mysql_hosts,
            open_operations,
            the_guard,
            backups,
        ]
        for part in parts:
            try:
                yield from part()
            except Exception:
                log.exception("metrics: %s not read", part.__name__)

    def queues(self) -> list[Metric]:
        depth = family("pinboard_queue_depth")
        with self.app.connection_for_read() as connection:
            channel = connection.default_channel
            for queue in settings.CELERY_TASK_QUEUES:
                try:
                    _, waiting, _ = channel.queue_declare(queue=queue.name, passive=True)
                except Exception:  # noqa: BLE001 - not declared yet: nothing waits there
                    waiting = 0
                depth.add_metric([queue.name], waiting)
        return [depth]


def mysql_hosts() -> list[Metric]:
    """Every host of the shard map in force, probed at once (a second or two at most)."""
    topology = plane().store.store.topology
    names = list(topology.hosts)
    with ThreadPoolExecutor(max_workers=min(16, len(names))) as pool:
        probes = dict(zip(names, pool.map(probe, topology.hosts.values()), strict=True))
    positions.record(topology, probes)  # what each master's replicas received, kept durably
    return host_metrics(topology.as_json(), probes)


def host_metrics(document: dict[str, Any], probes: dict[str, Probe]) -> list[Metric]:
    """The hosts' families from their probes and the shard map they were probed for."""
    up = family("pinboard_mysql_up")
    running = family("pinboard_mysql_replication_running")
    lag = family("pinboard_mysql_replication_lag_seconds")
    acks = family("pinboard_mysql_semi_sync_replicas")
    waiting = family("pinboard_mysql_semi_sync_wait_sessions")
    degraded = family("pinboard_mysql_semi_sync_degraded")
    acknowledged = family("pinboard_mysql_semi_sync_acknowledged")
    closed = family("pinboard_mysql_master_read_only")
    masters = {entry["master"] for entry in document["ranges"]}
    for name, found in probes.items():
        up.add_metric([name], float(found.reachable))
        _replication(name, found, running, lag)
        if found.semi_sync is not None and found.semi_sync.enabled:
            acks.add_metric([name], found.semi_sync.replicas)
            degraded.add_metric([name], float(found.semi_sync.degraded))
        if found.semi_sync_waiting is not None:
            waiting.add_metric([name], found.semi_sync_waiting)
        if found.semi_sync_acknowledged is not None:
            acknowledged.add_metric([name], found.semi_sync_acknowledged)
        if name in masters and found.read_only is not None:
            closed.add_metric([name], float(found.read_only))
    healthy = family("pinboard_mysql_pair_healthy")
    short = family("pinboard_mysql_under_replicated")
    streams = family("pinboard_mysql_stream_healthy")
    looks = {name: found.look() for name, found in probes.items()}
    for pair in judge(document, looks):
        names = ",".join(replica.name for replica in pair.replicas)
        healthy.add_metric([pair.master, names], float(pair.healthy))
        short.add_metric([pair.master], float(pair.under_replicated))
        for stream in pair.streams:
            source = stream.source_name or stream.status.source
            streams.add_metric([stream.host, source, stream.name], float(stream.healthy))
    return [
        up,
        running,
        lag,
        acks,
        degraded,
        waiting,
        acknowledged,
        closed,
        healthy,
        short,
        streams,
    ]


def _replication(
    name: str, found: Probe, running: GaugeMetricFamily, lag: GaugeMetricFamily
) -> None:
    """Every stream of the host: its default connection and its named ones."""
    for repl in filter(None, (found.replication, *found.streams)):
        both = repl.io_running == "Yes" and repl.sql_running == "Yes"
        running.add_metric([name, repl.source, repl.connection], float(both))
        if repl.lag_seconds is not None:
            lag.add_metric([name, repl.source, repl.connection], repl.lag_seconds)


def open_operations() -> list[Metric]:
    """Operations the journal holds as running (or left open by a run that died)."""
    count = family("pinboard_open_operations")
    age = family("pinboard_open_operation_age_seconds")
    now = time.time()
    oldest: dict[str, float] = {}
    counts: dict[str, int] = {}
    try:
        for operation, started in JournalEntry.objects.filter(
            ok__isnull=True, dry_run=False
        ).values_list("operation", "started_at"):
            counts[operation] = counts.get(operation, 0) + 1
            oldest[operation] = max(oldest.get(operation, 0.0), now - started.timestamp())
    finally:
        connection.close()  # the scrape's thread lives on: leave no connection to go stale
    for operation, n in sorted(counts.items()):
        count.add_metric([operation], n)
        age.add_metric([operation], oldest[operation])
    return [count, age]


def the_guard() -> list[Metric]:
    """The guard as its records in the config source say: paused, its last pass, and its
    newest decision about each master (``shardstore/control/guard.py``)."""
    with config.config_source() as source:
        watch = guard.status(source)
    now = time.time()
    paused, age = family("pinboard_guard_paused"), family("pinboard_guard_pass_age_seconds")
    decided = family("pinboard_guard_decision_age_seconds")
    paused.add_metric([], float(bool(watch.pause.get("paused"))))
    if watch.leader:
        age.add_metric([], now - float(watch.leader["at"]))
    newest: dict[str, Decision] = {}
    for decision in watch.decisions:  # newest first
        newest.setdefault(decision.host, decision)
    for host, decision in sorted(newest.items()):
        decided.add_metric([host, decision.kind], now - decision.at)
    counts = family("pinboard_guard_decisions")
    for kind, n in sorted(watch.counts.items()):
        counts.add_metric([kind], n)
    detection = family("pinboard_guard_detection_seconds")
    recovery = family("pinboard_guard_recovery_seconds")
    timed: dict[str, Decision] = {}
    for decision in watch.decisions:  # newest first: each host's newest with a time
        if decision.detected is not None or decision.took is not None:
            timed.setdefault(decision.host, decision)
    for host, decision in sorted(timed.items()):
        if decision.detected is not None:
            detection.add_metric([host, decision.kind], decision.detected)
        if decision.took is not None:
            recovery.add_metric([host, decision.kind], decision.took)
    return [paused, age, decided, counts, detection, recovery]


def backups() -> list[Metric]:
    """The backups as their records say (``shardstore/control/backup_records.py``): each
    range's newest backup and last verification, each master's archive."""
    with config.config_source() as source:
        kept = backup_records.status(source)
    masters = {r.master for r in plane().store.store.topology.ranges}
    now = time.time()
    age, size = family("pinboard_backup_age_seconds"), family("pinboard_backup_bytes")
    for span, taken in sorted(kept.taken.items()):
        age.add_metric([span], now - float(taken["ended"]))
        size.add_metric([span], float(taken["size"]))
    lag = family("pinboard_binlog_archive_lag_seconds")
    for host, caught_up in sorted(kept.archived.items()):
        if host in masters:  # a former master's archive is finished
            lag.add_metric([host], now - caught_up)
    passed, checked = family("pinboard_backup_verified"), family("pinboard_backup_verified_age_seconds")  # fmt: skip
    for span, outcome in sorted(kept.verified.items()):
        passed.add_metric([span], float(bool(outcome["ok"])))
        checked.add_metric([span], now - float(outcome["at"]))
    return [age, size, lag, passed, checked]
