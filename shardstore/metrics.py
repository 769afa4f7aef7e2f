"""What the data plane counts, for Prometheus: SQL round trips by host and kind, cache
lookups by pool, Redis round trips, and the config each process serves.

The metrics live in prometheus_client's default registry. In a group of processes that
shares a ``PROMETHEUS_MULTIPROC_DIR`` (gunicorn's workers, Celery's pool) each process
writes its samples to files there and the one that serves ``/metrics`` sums them; the
directory must be named before prometheus_client is first imported. Gauges of one
process (the config version it serves) keep the process's pid as a label, and are
dropped when it exits.

A slow statement is also logged (``shardstore.sql``), with its host and shard.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Mapping

from prometheus_client import Counter, Gauge, Histogram

log = logging.getLogger("shardstore.sql")

#: A statement slower than this is logged with its host and shard.
SLOW_SQL_SECONDS = 0.5

SQL_SECONDS = Histogram(
    "shardstore_sql_duration_seconds",
    "SQL round trips to the shard hosts and their latency, by host and kind "
    "(object, mapping, lookup: reads of that kind of table; write; other).",
    ["host", "kind"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
CACHE_CALLS = Counter("shardstore_cache_calls", "Round trips to a cache pool's servers.", ["pool"])
CACHE_LOOKUPS = Counter(
    "shardstore_cache_lookups", "Keys looked up in a cache pool, by result (hit, miss).",
    ["pool", "result"],
)  # fmt: skip
CACHE_FILLS = Counter(
    "shardstore_cache_fills", "Keys stored in a cache pool after a miss was read.", ["pool"]
)
READ_TOGETHER = Histogram(
    "shardstore_read_together_reads",
    "How many reads one read_together joins (one round trip per cache server for them all).",
    buckets=(1, 2, 3, 4, 5, 6, 8, 12, 16),
)
REDIS_CALLS = Counter("shardstore_redis_calls", "Round trips to the Redis instances.")
CONFIG_VERSION = Gauge(
    "shardstore_config_version", "The version of each config document this process serves.",
    ["document"], multiprocess_mode="liveall",
)  # fmt: skip
CONFIG_LOADED = Gauge(
    "shardstore_config_loaded_timestamp_seconds",
    "When this process took the version of each config document it serves.",
    ["document"], multiprocess_mode="liveall",
)  # fmt: skip
SOURCE_CONTACT = Gauge(
    "shardstore_config_source_contact_timestamp_seconds",
    "When this process last heard from its config source, by the source's kind (zk, file).",
    ["source"], multiprocess_mode="liveall",  # (labelled: no sample until it has reached one)
)  # fmt: skip

# The table a statement reads: ``... FROM db00042.items ...`` (either backend renders so).
_TABLE = re.compile(r"\bFROM\s+[\w`]+\.`?(\w+)", re.IGNORECASE)


class SqlMeter:
    """Times the statements of one store's hosts: each read by the kind of table it
    reads (``kinds``: table name to kind), anything else as a write."""

    def __init__(self, kinds: dict[str, str]) -> None:
        self.kinds = kinds
        self._timers: dict[tuple[str, str], Histogram] = {}  # each (host, kind)'s, found once

    def observe(self, host: str, shard_id: int, sql: str, seconds: float) -> None:
        key = (host, self.kind_of(sql))
        timer = self._timers.get(key)
        if timer is None:
            timer = self._timers[key] = SQL_SECONDS.labels(*key)
        timer.observe(seconds)
        if seconds >= SLOW_SQL_SECONDS:
            log.warning(
                "slow SQL: %.3f s on %s, shard %d: %s", seconds, host, shard_id, sql[:300],
                extra={"host": host, "shard": shard_id, "seconds": round(seconds, 3)},
            )  # fmt: skip

    def kind_of(self, sql: str) -> str:
        if sql.lstrip()[:6].upper() != "SELECT":
            return "write"
        table = _TABLE.search(sql)
        return self.kinds.get(table.group(1), "other") if table else "other"


_served: dict[tuple[int, str], int] = {}  # (pid, document): version, as last noted


def config_served(versions: Mapping[str, int]) -> None:
    """Note the version of each config document this process serves (cheap when unchanged:
    a forked process notes its own)."""
    pid = os.getpid()
    for document, version in versions.items():
        if _served.get((pid, document)) != version:
            _served[(pid, document)] = version
            CONFIG_VERSION.labels(document).set(version)
            CONFIG_LOADED.labels(document).set(time.time())


def source_reached(description: str) -> None:
    """This process reached its config source (``zk://...``, or a directory: ``file``)."""
    kind = description.partition("://")[0] if "://" in description else "file"
    SOURCE_CONTACT.labels(kind).set_to_current_time()
