"""Restore a range whose every host is lost (``plan_restore``): its newest backup before
the target, the archived binary logs replayed onto it up to the target, copied onto new
hosts and published as the range's master and replicas. What pinterest/mysql_utils'
mysql_restore_xtrabackup and its binlog replay did by hand, in steps:

1. unpack the backup (each part checked against its sha256) into a scratch server on this
   machine (``backups/scratch.py``) and replay the range's archived binary logs onto it
   from the backup's position up to the target: a time (the last transaction committed at
   or before it), a GTID, or the last archived write; the position reached is checked
   against a GTID target;
2. for each new host: wipe it (as ``rebuild`` does) and copy the scratch server's shard
   databases onto it, from one snapshot, with the restored GTID position (the first
   host's binary log state, the others' replication position);
3. the others replicate from the first, which waits for their acknowledgements (or, with
   none, commits alone until a replica connects, as a promoted master does) and takes
   writes;
4. publish the map: the first host the range's master, the others its replicas, the lost
   hosts out of service (this commits the restore);
5. stop the scratch server.

Refused before anything changes: a range the map does not have; a host of the range that
still answers (a restore replaces a range that is lost; a bad write on a live range is
``restore-shard``'s); a new host that is not a MySQL host of the map or serves a range; a
target in the future, or before the range's oldest backup; a gap in the archive after the
backup. Until step 4 the live map is untouched: a run that died is aborted (the new hosts
are left out of service, as they were) or resumed, every step running again from the
start (the scratch server is made again if this process lost it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..backups.binlogs import chain
from ..backups.manifest import Manifest, manifests
from ..backups.scratch import PointInTime
from ..backups.store import BackupStore
from ..durability import of_master
from ..exceptions import InvalidTopology
from ..replicas import replicas_of, with_replicas
from . import documents
from .config_source import ConfigSource, Revision
from .emergency_checks import answers
from .failover import Connect
from .mysql_hosts import MySQLHost
from .plans import Plan, Step
from .publish import publish_step
from .replica_copy import wipe_host
from .snapshot_copy import COPY_STREAMS, Throttle, copy_databases, shard_databases


def plan_restore(
    source: ConfigSource,
    store: BackupStore,
    *,
    span: list[int],
    onto: list[str],
    author: str,
    to_time: float | None = None,
    to_gtid: str | None = None,
    connect: Connect = MySQLHost,
    clock: Callable[[], float] = time.time,
    base: Revision | None = None,
) -> Plan:
    """The plan to restore the range ``span`` ([first, last]) onto the hosts ``onto``
    (the first its master) as of ``to_time`` or ``to_gtid`` (neither: the last archived
    write). InvalidTopology, with the reason, when it cannot be done."""
    current = base or source.current(documents.SHARDS)
    document = current.document
    entry = next((r for r in document["ranges"] if r["range"] == span), None)
    if entry is None:
        raise InvalidTopology(f"the shard map has no range {span[0]}-{span[1]}")
    lost = [entry["master"], *replicas_of(entry)]
    _check_onto(document, onto)
    if base is None:
        for name in lost:
            if answers(connect, name, document["hosts"][name]):
                raise InvalidTopology(f"{name}, a host of range {span[0]}-{span[1]}, answers: a restore replaces a range whose every host is lost (a bad write on a live range: restore-shard)")  # fmt: skip
    if to_time is not None and to_time > clock():
        raise InvalidTopology(f"{utc(to_time)} is in the future")
    made = newest_backup(store, span, to_time)
    archive = str(entry["master"])
    chain(store, archive, made.gtid)  # a gap is refused now, not half-way
    target = f"as of {utc(to_time)}" if to_time is not None else f"to GTID {to_gtid}" if to_gtid else "to its last archived write"  # fmt: skip
    spans = f"{span[0]}-{span[1]}"
    master, replicas = onto[0], onto[1:]
    addresses = document["hosts"]
    durability = of_master(document, str(entry["master"]))
    restored = PointInTime(store, made, archive, to_time=to_time, to_gtid=to_gtid)

    def copy_onto(name: str) -> Step:
        def run() -> str:
            server = restored.server()
            position = restored.position
            with server.connect() as s, connect(addresses[name]) as h, server.connect() as busy:
                wipe_host(connect, h)
                done = copy_databases(s, h, shard_databases(s), throttle=Throttle(busy), parallel=COPY_STREAMS)  # fmt: skip
                if name == master:
                    h.query("SET GLOBAL gtid_binlog_state = %s", (position,))
                else:
                    h.query("SET GLOBAL gtid_slave_pos = %s", (position,))
            return f"{done.databases} databases ({done.bytes / 1e6:.1f} MB) copied onto {name} at {position}"  # fmt: skip

        return Step(f"wipe {name} and copy the restored shard databases onto it", (name,), run)

    def take_writes() -> str:
        with connect(addresses[master]) as m:
            for name in replicas:
                with connect(addresses[name]) as r:
                    r.replicate_from(m, position="slave_pos")
            if replicas:
                m.set_semi_sync(True, durability)
            else:
                m.arm_semi_sync(durability)
            m.set_read_only(False)
        return f"{master} takes writes ({durability}){', acknowledged by ' + ', '.join(replicas) if replicas else ', alone until a replica connects'}"  # fmt: skip

    def stop_writes() -> str:
        with connect(addresses[master]) as m:
            m.set_read_only(True)
        return f"{master} read-only again"

    ranges = [with_replicas({**r, "master": master}, replicas) if r is entry else r for r in document["ranges"]]  # fmt: skip
    out = sorted({*document.get("out_of_service", []), *lost} - set(onto))
    final = documents.validate(documents.SHARDS, {**document, "ranges": ranges, "out_of_service": out})  # fmt: skip
    replayed = f"restore backup {made.host}/{made.name} into a scratch server and replay {archive}'s archived binary logs {target}"  # fmt: skip
    writes = f"{', '.join(replicas)} replicate from {master}; {master} takes writes" if replicas else f"{master} takes writes"  # fmt: skip
    change = f"shards {spans} on {master}{' with ' + ', '.join(replicas) if replicas else ''}; {', '.join(lost)} out of service"  # fmt: skip
    publish = publish_step(
        source, current, final, author=author, reason=f"restore {spans} {target} onto {', '.join(onto)}",
        change=change, hosts=tuple(onto), commits=True,
    )  # fmt: skip
    steps = [
        Step(replayed, tuple(onto), restored.said, restored.drop),
        *(copy_onto(name) for name in onto),
        Step(writes, tuple(onto), take_writes, stop_writes),
        publish,
        Step("stop the scratch server", tuple(onto), restored.drop),
    ]
    params = {
        "span": span, "onto": onto, "store": store.url, "to_time": to_time, "to_gtid": to_gtid,
        "backup": made.key, "base": current.version, "rerunnable": True,
    }  # fmt: skip
    return Plan("restore", f"restore shards {spans} {target} onto {', '.join(onto)} from backup {made.host}/{made.name}", steps, params)  # fmt: skip


def newest_backup(store: BackupStore, span: list[int], before: float | None) -> Manifest:
    """The newest backup holding the range ``span`` that ended by the second ``before``."""
    spans = f"{span[0]}-{span[1]}"
    held = [m for m in manifests(store) if spans in [s.strip() for s in m.ranges.split(",")]]
    if not held:
        raise InvalidTopology(f"{store.url} has no backup of range {spans}")
    # A time names its whole second: a backup ended within it holds nothing committed later.
    fit = [m for m in held if before is None or m.ended < int(before) + 1]
    if not fit:
        raise InvalidTopology(f"{utc(before or 0)} is before the oldest backup of range {spans} (ended {utc(held[0].ended)})")  # fmt: skip
    return fit[-1]


def _check_onto(document: dict[str, Any], onto: list[str]) -> None:
    if not onto or len(set(onto)) != len(onto):
        raise InvalidTopology("name the hosts to restore onto, each once (the first is the master)")
    serving = {n: r["range"] for r in document["ranges"] for n in (r["master"], *replicas_of(r))}
    for name in onto:
        if not str(document["hosts"].get(name, "")).startswith("mysql://"):
            raise InvalidTopology(f"{name} is not a MySQL host of the shard map")
        if name in serving:
            first, last = serving[name]
            raise InvalidTopology(f"{name} serves shards {first}-{last}: a restore goes onto hosts that serve no range")  # fmt: skip


def utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(seconds))
