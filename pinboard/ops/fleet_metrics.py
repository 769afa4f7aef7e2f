"""The fleet's figures, read at each scrape of a Celery worker's ``/metrics``: the depth
of each task queue, every MySQL host of the shard map as the console probes it
(reachable, replicating, lag, semi-sync), each pair's health, and the operations left
open in the journal.

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

from shardstore.control.pairs import judge

from ..data_plane import plane
from .models import JournalEntry
from .queries.probes import Probe, probe

log = logging.getLogger(__name__)


#: Every family this collector makes: its help and its labels.
FAMILIES: dict[str, tuple[str, list[str]]] = {
    "pinboard_queue_depth": ("Tasks waiting in each Celery queue.", ["queue"]),
    "pinboard_mysql_up": ("1: the host answers.", ["host"]),
    "pinboard_mysql_replication_running": (
        "1: the replica's IO and SQL threads both run.", ["host", "source"],
    ),
    "pinboard_mysql_replication_lag_seconds": (
        "Seconds the replica is behind its master (absent while it does not apply).", ["host"],
    ),
    "pinboard_mysql_semi_sync_replicas": (
        "Replicas acknowledging the master's commits now (semi-sync on).", ["host"],
    ),
    "pinboard_mysql_pair_healthy": (
        "1: the master has a healthy replica (the console's pair check).", ["master", "replica"],
    ),
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
        parts: list[Callable[[], list[Metric]]] = [self.queues, mysql_hosts, open_operations]
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
    up = family("pinboard_mysql_up")
    running = family("pinboard_mysql_replication_running")
    lag = family("pinboard_mysql_replication_lag_seconds")
    acks = family("pinboard_mysql_semi_sync_replicas")
    for name, found in probes.items():
        up.add_metric([name], float(found.reachable))
        _replication(name, found, running, lag)
        if found.semi_sync is not None and found.semi_sync.enabled:
            acks.add_metric([name], found.semi_sync.replicas)
    healthy = family("pinboard_mysql_pair_healthy")
    looks = {name: found.look() for name, found in probes.items()}
    for pair in judge(topology.as_json(), looks):
        healthy.add_metric([pair.master, pair.replica or ""], float(pair.healthy))
    return [up, running, lag, acks, healthy]


def _replication(
    name: str, found: Probe, running: GaugeMetricFamily, lag: GaugeMetricFamily
) -> None:
    repl = found.replication
    if repl is None:
        return
    both = repl.io_running == "Yes" and repl.sql_running == "Yes"
    running.add_metric([name, repl.source], float(both))
    if repl.lag_seconds is not None:
        lag.add_metric([name], repl.lag_seconds)


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
