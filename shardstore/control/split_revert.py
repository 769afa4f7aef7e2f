"""Undo a split (``plan_split_revert``, until ``cleanup`` has run): the moving shards go
back to the host they left, with their newest rows. They are made read-only again in the
map, fenced on the replica in MySQL itself (``grant_fence``), copied back from the
replica to the host, the site's writes on them given back on the host, the old ranges
published, and the replica's copies renamed away. The replica has taken its own writes
since, so it cannot simply follow the host again: it is left out of service until it is
rebuilt as a replica.
"""

from __future__ import annotations

from typing import Any

from ..exceptions import InvalidTopology
from ..topology import database_name
from . import documents
from .config_source import ConfigSource, Revision
from .grant_fence import fence_step
from .mysql_hosts import MySQLHost
from .plans import Plan, Step
from .publish import FOLLOW_SECONDS, followed_step, publish_step
from .split import Connect, rename_shards, renamed_databases, shards_in, spans, split_revision


def plan_split_revert(
    source: ConfigSource,
    *,
    split: int,
    author: str,
    connect: Connect = MySQLHost,
    follow_seconds: float = FOLLOW_SECONDS,
    base: Revision | None = None,
) -> Plan:
    """The plan to give the shards of split ``split`` back to the host they left."""
    after, _ = split_revision(source, split)
    current = base or source.current(documents.SHARDS)
    document = current.document
    words = after.reason.split()  # "split HOST onto REPLICA"
    host, replica = words[1], words[3]
    moved = [r["range"] for r in after.document["ranges"] if r["master"] == replica]
    for first, last in moved:
        for shard in (first, last):
            if _master_of(document, shard) != replica:
                raise InvalidTopology(f"shard {shard} is no longer on {replica}: cannot revert")
    addresses = document["hosts"]
    suffix = f"_split{split}"
    with connect(addresses[host]) as m:
        if not renamed_databases(m, suffix):
            raise InvalidTopology(f"split {split} was cleaned up on {host}: it cannot be reverted")
    frozen = documents.validate(documents.SHARDS, {**document, "read_only": moved})
    ranges = [
        ({**r, "master": host} if r["master"] == replica and r["range"] in moved else r)
        for r in document["ranges"]
    ]
    merged = _merge(ranges)
    out = sorted({*document.get("out_of_service", []), replica})
    restored = {k: v for k, v in document.items() if k != "read_only"}
    restored = documents.validate(
        documents.SHARDS, {**restored, "ranges": merged, "out_of_service": out}
    )
    frozen_revision = Revision(documents.SHARDS, current.version + 1, frozen, author, "", "")
    reason = f"revert split {split}: shards {spans(moved)} back to {host}"

    def copy_back() -> str:
        with connect(addresses[replica]) as r, connect(addresses[host]) as m:
            rows = 0
            for shard in shards_in(moved):
                rows += copy_shard(r, m, shard, template=f"{database_name(shard)}{suffix}")
        return f"{rows} rows copied from {replica} to {host}"

    moved_databases = [database_name(shard) for shard in shards_in(moved)]

    def set_aside() -> str:
        with connect(addresses[replica]) as r:
            n = rename_shards(r, shards_in(moved), f"_reverted{split}")
        return f"{n} shards renamed *_reverted{split} on {replica}; {replica} out of service"

    return Plan(
        "split-revert",
        reason,
        [
            publish_step(
                source,
                current,
                frozen,
                author=author,
                reason=f"{reason}: read-only window",
                change=f"shards {spans(moved)} read-only",
                hosts=(host, replica),
            ),
            followed_step(
                source,
                documents.SHARDS,
                current.version + 1,
                hosts=(host, replica),
                timeout=follow_seconds,
            ),
            fence_step(connect, replica, addresses[replica], moved_databases, spans(moved)),
            Step(
                f"copy shards {spans(moved)} from {replica} back to {host}",
                (host, replica),
                copy_back,
            ),
            fence_step(
                connect, host, addresses[host], moved_databases, spans(moved), give_back=True
            ),
            publish_step(
                source,
                frozen_revision,
                restored,
                author=author,
                reason=reason,
                change=f"shards {spans(moved)} mastered by {host}; {replica} out of service",
                hosts=(host, replica),
                commits=True,
            ),
            Step(f"rename {replica}'s copies of shards {spans(moved)} away", (replica,), set_aside),
        ],
        {"split": split, "host": host, "replica": replica, "base": current.version},
    )


def copy_shard(source: MySQLHost, target: MySQLHost, shard: int, *, template: str) -> int:
    """Make ``db<shard>`` on ``target`` a copy of it on ``source`` (tables shaped like
    ``template``'s on the target). Returns the rows copied."""
    db = database_name(shard)
    target.query(f"CREATE DATABASE IF NOT EXISTS {db}")
    rows = 0
    for table in [next(iter(r.values())) for r in target.query(f"SHOW TABLES FROM {template}")]:
        target.query(f"CREATE TABLE IF NOT EXISTS {db}.{table} LIKE {template}.{table}")
        target.query(f"DELETE FROM {db}.{table}")
        data = source.query(f"SELECT * FROM {db}.{table}")
        if data:
            columns = list(data[0])
            sql = (
                f"INSERT INTO {db}.{table} ({', '.join(f'`{c}`' for c in columns)})"
                f" VALUES ({', '.join(['%s'] * len(columns))})"
            )
            target.executemany(sql, [tuple(row[c] for c in columns) for row in data])
            rows += len(data)
    return rows


def _master_of(document: dict[str, Any], shard: int) -> str | None:
    for entry in document["ranges"]:
        if entry["range"][0] <= shard <= entry["range"][1]:
            return str(entry["master"])
    return None


def _merge(ranges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adjacent ranges with the same master and slave as one range."""
    merged: list[dict[str, Any]] = []
    for entry in sorted(ranges, key=lambda r: r["range"][0]):
        last = merged[-1] if merged else None
        if (
            last is not None
            and last["master"] == entry["master"]
            and last.get("slave") == entry.get("slave")
            and last["range"][1] + 1 == entry["range"][0]
        ):
            last["range"] = [last["range"][0], entry["range"][1]]
        else:
            merged.append({**entry, "range": list(entry["range"])})
    return merged
