"""Rebuild a MySQL host as a replica (``plan_rebuild``): after an emergency failover, a
split's revert or a replica's failure, a host (empty, or a former master whose data went
stale or diverged) becomes the replica of the master it is paired with, and goes back in
service. What the runbook did by hand, in steps:

1. check the master answers and takes writes, and the host answers;
2. if the map still names the host a replica (or in service), take it out of service
   first: from here on it holds no usable copy, and no failover may promote it;
3. wipe the host: stop its replication, drop its shard databases (``db%05d`` and what a
   split left aside), reset its binary log (a former master's own GTIDs would make strict
   mode refuse the master's); refused if the map in force names it master of any range;
4. copy the shard databases onto it (``replica_copy``): from the newest fresh backup of
   the master's ranges and its archive, restored into a scratch server, when a backup
   store is given, so the master serves nothing but its binary log; else from one
   consistent snapshot of the master, writes going on, throttled by its load
   (``snapshot_copy``); and set ``gtid_slave_pos`` to the copy's position;
5. make it replicate from the master from there (GTID, the replication account);
6. wait until it has applied everything the master had written by then;
7. compare the copy with the master, shard by shard at one GTID position (``diff``):
   a copy that differs is refused, never put in service;
8. make the master wait for its acknowledgements (semi-sync), and see that it does;
9. publish the map with the host a replica of the master's ranges, back in service.

Which master: the one whose ranges name the host as replica; else, for a host out of
service, the map's history says which ranges it last served (as master or replica), and
the master that now holds those ranges with fewer replicas than it should have
(``replicas.WANTED``) is the one. ``master=`` names it
when that is ambiguous, and is checked the same way.

Every step can run again from the start (a re-run wipes and copies from scratch), so a
run whose process died is resumed from the step it died in (``shardstore resume OP``),
or aborted: the host is then left out of service, wiped, replicating from no one, and
the master as it was (``shardstore abort OP``). Until step 9 the host is out of service.

The two publishes re-read the map in force and compare-and-set on it, rather than hold
the ``CONFIG`` lock for the whole run: a copy takes minutes, and the other pairs'
failovers must not wait for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..backups.manifest import Manifest
from ..backups.store import BackupStore, open_store
from ..durability import of_master
from ..exceptions import InvalidTopology
from ..replicas import MOST, WANTED, replicas_of, with_replicas
from ..topology import Topology
from . import documents
from .config_source import ConfigSource, Revision, VersionConflict
from .diff import diff_hosts
from .failover import Connect
from .mysql_hosts import HostError, MySQLHost
from .plans import Plan, Step
from .replica_copy import copy_onto, fresh_backup, wipe_host
from .snapshot_copy import COPY_STREAMS

#: How long the new replica is given to apply what the master wrote during the copy.
CATCH_UP_SECONDS = 600.0
#: How long the master is given to see its new replica as semi-synchronous.
SEMI_SYNC_SECONDS = 10.0


def paired_master(source: ConfigSource, host: str, master: str | None = None) -> str:
    """The master ``host`` is to replicate from (see the module's rule); InvalidTopology,
    with the reason, when there is none or more than one."""
    document = source.current(documents.SHARDS).document
    if host not in document["hosts"]:
        raise InvalidTopology(f"no host {host} in the shard map")
    ranges = document["ranges"]
    for entry in ranges:
        if entry["master"] == host:
            raise InvalidTopology(
                f"{host} is the master of shards {entry['range'][0]}..{entry['range'][1]}:"
                " a master is never rebuilt (fail it over first)"
            )
    if master is None:
        named = sorted({r["master"] for r in ranges if host in replicas_of(r)})
        if len(named) > 1:
            raise InvalidTopology(f"{host} is the replica of {', '.join(named)}: pass --master")
        master = named[0] if named else _former_master(source, document, host)
    mastered = [r for r in ranges if r["master"] == master]
    if not mastered:
        raise InvalidTopology(f"{master} is the master of no range")
    others = {name for r in mastered for name in replicas_of(r)} - {host}
    if len(others) >= MOST:
        raise InvalidTopology(f"{master} has {MOST} replicas already: {', '.join(sorted(others))}")
    if master in document.get("out_of_service", []):
        raise InvalidTopology(f"{master} is out of service")
    return str(master)


def _former_master(source: ConfigSource, document: dict[str, Any], host: str) -> str:
    """The master that now holds, with fewer replicas than it should have, the shards
    ``host`` last served."""
    for revision in source.history(documents.SHARDS):
        served = [r["range"] for r in revision.document["ranges"] if host in (r["master"], *replicas_of(r))]  # fmt: skip
        if not served:
            continue
        now = {
            r["master"]
            for r in document["ranges"]
            if len(replicas_of(r)) < WANTED
            and any(r["range"][0] <= last and first <= r["range"][1] for first, last in served)
        }
        if len(now) == 1:
            return str(now.pop())
        held = ", ".join(sorted(now)) or f"no master with fewer than {WANTED} replicas"
        raise InvalidTopology(
            f"{host} last served shards {_spans(served)} (map v{revision.version}), now held"
            f" by {held}: name the master with --master"
        )
    raise InvalidTopology(f"{host} never served a range: name its master with --master")


def plan_rebuild(
    source: ConfigSource,
    *,
    host: str,
    author: str,
    connect: Connect = MySQLHost,
    master: str | None = None,
    replaces: str | None = None,
    max_lag: int = 10,
    max_threads_running: int = 32,
    parallel: int = COPY_STREAMS,
    say: Callable[[str], None] = lambda line: None,
    base: Revision | None = None,
    params: dict[str, Any] | None = None,
    store: BackupStore | None = None,
) -> Plan:
    """The plan to make ``host`` the replica of its master (``paired_master``); with
    ``replaces``, in the place of that replica of the master, taken out of service with
    ``host`` (the guard's replacement of a dead one). The copy comes from the newest fresh
    backup in ``store`` when there is one (``replica_copy``), else from the master.
    ``base`` and ``params``: a dead run's, to plan it again as it was (``recovery.py``)."""
    current = base or source.current(documents.SHARDS)
    if params is None:
        master = paired_master(source, host, master)
        with connect(current.document["hosts"][master]) as m:
            state = m.semi_sync()
        # What an abort puts back: off, or armed (a promoted master: commits wait for the
        # first replica that connects, alone until then), or kept.
        waits = "off" if not state.enabled else "armed" if state.falls_back else "kept"
        params = {"host": host, "master": master, "semi_sync": waits, "base": current.version, "rerunnable": True}  # fmt: skip
        if replaces is not None:
            params["replaces"] = replaced(current.document, master, replaces)
        spans = [f"{r['range'][0]}-{r['range'][1]}" for r in current.document["ranges"] if r["master"] == master]  # fmt: skip
        made = fresh_backup(store, spans, master)
        if store is not None and made is not None:
            params |= {"store": store.url, "backup": made.key}
    master, was_semi_sync = str(params["master"]), str(params["semi_sync"])
    leaving = {host, *([params["replaces"]] if params.get("replaces") else [])}
    document = current.document
    addresses = document["hosts"]
    named = any(host in replicas_of(r) for r in document["ranges"])
    durability = of_master(document, master)
    in_service = host not in document.get("out_of_service", [])
    instead = f", in the place of {params['replaces']}" if params.get("replaces") else ""
    shards = _spans([r["range"] for r in document["ranges"] if r["master"] == master])

    def check() -> str:
        with connect(addresses[master]) as m:
            if m.read_only():
                raise HostError(f"{master} is read-only: not a master taking writes")
            status = m.replica_status()
            if status is not None:
                raise HostError(f"{master} replicates from {status.source}: not a master")
        with connect(addresses[host]) as h:
            h.server_id()
        return f"{master} takes writes; {host} answers"

    def take_out() -> str:
        def change(doc: dict[str, Any]) -> dict[str, Any]:
            ranges = [with_replicas(r, [n for n in replicas_of(r) if n not in leaving]) for r in doc["ranges"]]  # fmt: skip
            out = sorted({*doc.get("out_of_service", []), *leaving})
            return {**doc, "ranges": ranges, "out_of_service": out}

        return _publish(source, change, author, f"rebuild {host}: out of service while rebuilt{instead}")  # fmt: skip

    def wipe() -> str:
        for entry in source.current(documents.SHARDS).document["ranges"]:
            if entry["master"] == host:
                raise HostError(
                    f"{host} is the master of {entry['range']} in the map in force: not wiped"
                )
        with connect(addresses[host]) as h:
            return (
                f"{wipe_host(connect, h)} shard databases dropped on {host}, its binary log reset"
            )

    def left_out() -> str:
        with connect(addresses[host]) as h:
            h.stop_replicating()
        return f"{host} left out of service, wiped, replicating from no one: rebuild it again"

    backup = _backup(store, params, master)

    def copy() -> str:
        with connect(addresses[host]) as h:
            return copy_onto(connect, addresses[master], h, backup=backup, max_threads_running=max_threads_running, parallel=parallel, say=say).said  # fmt: skip

    def replicate() -> str:
        with connect(addresses[host]) as h, connect(addresses[master]) as m:
            h.replicate_from(m, position="slave_pos")
            position = h.value("SELECT @@global.gtid_slave_pos")
        return f"{host} replicates from {master} from {position or 'the start'}"

    def stop() -> str:
        with connect(addresses[host]) as h:
            h.stop_replicating()
        return f"{host} replicates from no one"

    def catch_up() -> str:
        with connect(addresses[master]) as m, connect(addresses[host]) as h:
            position = m.gtid_binlog_pos()
            if not h.wait_for(position, CATCH_UP_SECONDS):
                raise HostError(f"{host} did not apply {position} in {CATCH_UP_SECONDS:g}s")
            status = h.replica_status()
        if status is None or not status.healthy:
            raise HostError(
                f"{host}'s replication is broken: {status.last_error if status else 'none'}"
            )
        if status.lag_seconds is None or status.lag_seconds > max_lag:
            raise HostError(f"{host} is {status.lag_seconds}s behind (at most {max_lag}s)")
        return f"{host} has applied {position}, {status.lag_seconds}s behind"

    def compare() -> str:
        mastered = Topology.from_json(source.current(documents.SHARDS).document).shards_of(master)
        report = diff_hosts(connect, addresses[master], addresses[host], mastered, names=(master, host))  # fmt: skip
        if not report.clean:
            raise HostError(f"the copy differs: {report.text()}")
        return report.text()

    def semi_sync() -> str:
        with connect(addresses[master]) as m, connect(addresses[host]) as h:
            m.set_semi_sync(True, durability)
            if not _acknowledged(m, h):
                h.query("STOP SLAVE IO_THREAD")  # it asks for semi-sync as it connects
                h.query("START SLAVE IO_THREAD")
                if not _acknowledged(m, h):
                    raise HostError(
                        f"{host} does not acknowledge {master}'s commits after {SEMI_SYNC_SECONDS:g}s"
                    )
        return f"{master} waits for {host}'s acknowledgements"

    def semi_sync_back() -> str:
        with connect(addresses[master]) as m:
            if was_semi_sync == "armed":
                m.arm_semi_sync(durability)
            else:
                m.set_semi_sync(was_semi_sync == "kept", durability)
        return f"{master}'s semi-sync {was_semi_sync} as before"

    def put_in() -> str:
        def change(doc: dict[str, Any]) -> dict[str, Any]:
            ranges = [with_replicas(r, [*replicas_of(r), host]) if r["master"] == master else r for r in doc["ranges"]]  # fmt: skip
            if not any(r["master"] == master for r in ranges):
                raise InvalidTopology(f"{master} is the master of no range any more")
            out = [h for h in doc.get("out_of_service", []) if h != host]
            return {**doc, "ranges": ranges, "out_of_service": out}

        return _publish(source, change, author, f"rebuild {host}: {master}'s replica")

    def in_force() -> bool:
        doc = source.current(documents.SHARDS).document
        mine = [r for r in doc["ranges"] if r["master"] == master]
        return (
            bool(mine)
            and all(host in replicas_of(r) for r in mine)
            and host not in doc.get("out_of_service", [])
        )

    steps = [Step(f"check {master} takes writes and {host} answers", (master, host), check)]
    if named or in_service or instead:
        steps.append(
            Step(
                f"publish the shard map: {' and '.join(sorted(leaving))} out of service"
                f" while {host} is rebuilt",
                tuple(sorted(leaving)),
                take_out,
            )
        )
    steps += [
        Step(
            f"wipe {host}: stop its replication, drop its shard databases, reset its binary log",
            (host,),
            wipe,
            left_out,
        ),
        Step(
            f"copy {master}'s shard databases (shards {shards}) onto {host}: {'from backup ' + backup[1].host + '/' + backup[1].name + ' and the archive' if backup else 'one snapshot, throttled'}",
            (master, host),
            copy,
        ),
        Step(
            f"{host} replicates from {master} from the copy's GTID position",
            (master, host),
            replicate,
            stop,
        ),
        Step(
            f"wait until {host} has caught up with {master} (at most {max_lag}s behind)",
            (host,),
            catch_up,
        ),
        Step(
            f"compare {host} with {master}: rows and checksums of every shard",
            (master, host),
            compare,
        ),
        Step(
            f"{master} waits for {host}'s acknowledgements (semi-sync)",
            (master, host),
            semi_sync,
            semi_sync_back,
        ),
        Step(
            f"publish the shard map: {host} the replica of {master} (shards {shards}), in service",
            (master, host),
            put_in,
            commits=True,
            took_effect=in_force,
        ),
    ]
    summary = f"rebuild {host} as the replica of {master} (shards {shards}){instead}"
    return Plan("rebuild", summary, steps, params)


def replaced(document: dict[str, Any], master: str, replica: str) -> str:
    """``replica``, if the map names it a replica of ``master``; InvalidTopology if not."""
    if not any(r["master"] == master and replica in replicas_of(r) for r in document["ranges"]):
        raise InvalidTopology(f"{replica} is not a replica of {master} in the shard map")
    return replica


def _backup(store: BackupStore | None, params: dict[str, Any], master: str) -> tuple[BackupStore, Manifest, str] | None:  # fmt: skip
    """The backup the plan copies from, as its params name it (a re-planned run's too)."""
    if not params.get("backup"):
        return None
    store = store or open_store(str(params["store"]))
    return store, Manifest.from_json(store.get(str(params["backup"]))), master


def _acknowledged(m: MySQLHost, h: MySQLHost) -> bool:
    """Whether ``m`` waits for acknowledgements and ``h`` is connected to it as one that
    sends them (its other replicas may send them too), within ``SEMI_SYNC_SECONDS``."""
    deadline = time.monotonic() + SEMI_SYNC_SECONDS
    while True:
        if m.semi_sync().kept and h.acknowledges():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def _publish(
    source: ConfigSource,
    change: Callable[[dict[str, Any]], dict[str, Any]],
    author: str,
    reason: str,
) -> str:
    """Publish ``change`` of the map in force, compare-and-set; read again if another
    publish came in between. A change that changes nothing publishes nothing."""
    for _ in range(5):
        current = source.current(documents.SHARDS)
        document = {**current.document}
        new = documents.validate(documents.SHARDS, change(document))
        if new == documents.validate(documents.SHARDS, document):
            return f"shard map v{current.version} says so already"
        try:
            published = source.publish(
                documents.SHARDS, new, author=author, reason=reason, expect_version=current.version
            )
        except VersionConflict:
            continue
        return f"shard map version {published.version} published"
    raise VersionConflict("the shard map kept changing: run the rebuild again")


def _spans(ranges: list[list[int]]) -> str:
    return ", ".join(f"{first}..{last}" for first, last in ranges)
