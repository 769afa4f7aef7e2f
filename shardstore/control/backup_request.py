"""Ask for a backup of a range now (the console's *Back up now*, ``shardstore backup
request``): the request is recorded in the config source, and the replica the range's
backups are taken from takes one at its timer's next run (``backup take --if-due``: every
few minutes on each shard host; the local cluster's schedule looks every few seconds).
mariadb-backup reads the server's own data files, so the backup is taken on its host,
never by the worker or the web host that asked."""

from __future__ import annotations

import time

from ..exceptions import InvalidTopology
from ..replicas import replicas_of
from . import backup_records, documents
from .config_source import ConfigSource
from .plans import Plan, Step


def plan_backup_request(source: ConfigSource, *, span: list[int], author: str) -> Plan:
    """The plan to ask for a backup of the range ``span``; InvalidTopology if the map has
    no such range, or it has no replica in service to take it from."""
    document = source.current(documents.SHARDS).document
    entry = next((r for r in document["ranges"] if list(r["range"]) == span), None)
    name = f"{span[0]}-{span[1]}"
    if entry is None:
        raise InvalidTopology(f"no range {name} in the shard map")
    out = set(document.get("out_of_service", []))
    if not [host for host in replicas_of(entry) if host not in out]:
        raise InvalidTopology(f"range {name} has no replica in service: a backup is taken from a replica (shardstore backup take {name} --master, on its master's host, to back the master up)")  # fmt: skip

    def ask() -> str:
        backup_records.requested(source, name, author, time.time())
        return f"a backup of range {name} asked for: its replica takes it at its timer's next run"  # fmt: skip

    step = Step(f"ask for a backup of range {name} (from one of {', '.join(replicas_of(entry))})", (), ask)  # fmt: skip
    return Plan("backup-request", f"back range {name} up now", [step], {"range": span})
