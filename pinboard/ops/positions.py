"""The fleet probe's record of what each master's replicas had received
(``shardstore/control/acknowledged.py``): made at each scrape of the fleet's metrics
(``fleet_metrics.mysql_hosts``), from the hosts it has just probed, in this deployment's
config source, where an emergency failover reads it whichever entry point runs it.

A record that cannot be written is logged and the metrics are served all the same: the
last record stays, and an emergency failover holds a candidate to it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping

from shardstore import Topology
from shardstore.control import acknowledged
from shardstore.control.config_source import ConfigSource
from shardstore.control.mysql_hosts import ReplicaStatus

from ..data_plane import open_config
from .queries.probes import Probe

log = logging.getLogger(__name__)

_source: ConfigSource | None = None  # opened at the first record, kept for the next ones
_lock = threading.Lock()


def record(topology: Topology, probes: Mapping[str, Probe]) -> None:
    """Record, for each master of ``topology``, the highest position its replicas had
    received, from what each host of it said (``probes``, by name): the default
    replication connection of each."""
    global _source
    replication = {
        name: ReplicaStatus(
            source=repl.source,
            io_running=repl.io_running == "Yes",
            sql_running=repl.sql_running == "Yes",
            lag_seconds=repl.lag_seconds,
            last_error=repl.last_error,
            io_state=repl.io_running,
            received=repl.received,
        )
        for name, found in probes.items()
        if (repl := found.replication) is not None and repl.received
    }
    if not replication:
        return  # no MySQL replica (the embedded default): nothing to record
    try:
        with _lock:
            if _source is None:
                _source = open_config()
            acknowledged.record(_source, topology.as_json(), replication)
    except Exception:
        log.exception("the replicas' received positions were not recorded")
