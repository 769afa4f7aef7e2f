"""Failover: a master's replica takes over its shards (after pinterest/mysql_utils'
``mysql_failover``), planned or in an emergency.

Planned (``plan_failover``: the master is retired, or needs maintenance). Steps:

1. check the replica: it replicates from the master, both threads run, no error,
   lag at most ``max_lag`` seconds;
2. set ``read_only`` on the master and confirm that no write lands for a short
   window (its GTID position stands still): from here, writes to these shards
   fail with a typed error the site turns into a retry, never a silent loss;
3. wait until the replica has applied the master's last transaction (GTID);
   if it cannot in time, the master is made writable again and nothing changed;
4. publish the shard map with the replica as master (and the old master as its
   replica): every process switches within a second;
5. stop replication on the new master and clear its ``read_only``;
6. make the old master replicate from the new one (it stays ``read_only``).

To revert after step 4: fail over again the other way.

Emergency (``plan_emergency_failover``: the master cannot be reached). Steps:

1. confirm the master does not answer (if it does, a planned failover loses
   nothing: use that);
2. let the most advanced of its replicas apply all it received: with
   semi-synchronous replication every write a client saw acknowledged is
   there;
3. stop replication there and clear its ``read_only``;
4. publish the shard map with it as master, the old master out of service.

The old master is fenced twice over: every server starts ``read_only`` (so if
it comes back, it refuses writes until an operator says otherwise), and no
process writes to a host the shard map in force does not name as a shard's
master (``shardstore.fence``). It comes back into service only after it has
been rebuilt as a replica of the new master (``host-service HOST --in``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..exceptions import InvalidTopology
from . import documents
from .config_source import ConfigSource
from .mysql_hosts import HostError, MySQLHost, endpoint, gtid_sequence
from .plans import Plan, Step
from .publish import publish_step

Connect = Callable[[str], MySQLHost]


def master_and_replica(document: dict[str, Any], host: str) -> tuple[list[dict[str, Any]], str]:
    """The ranges ``host`` masters, and the one replica they all name (a planned failover
    or a split hands them to it)."""
    mastered = [r for r in document["ranges"] if r["master"] == host]
    if not mastered:
        raise InvalidTopology(f"host {host} is the master of no range")
    replicas = {r.get("slave") for r in mastered}
    if len(replicas) != 1 or None in replicas:
        raise InvalidTopology(
            f"the ranges of {host} need one replica, not {sorted(map(str, replicas))}"
        )
    return mastered, str(replicas.pop())


def check_replica_step(
    connect: Connect, document: dict[str, Any], host: str, replica: str, *, max_lag: int
) -> Step:
    """The first step of a planned failover or a split: ``replica`` follows ``host``,
    healthy, at most ``max_lag`` seconds behind."""
    addresses = document["hosts"]

    def check() -> str:
        with connect(addresses[replica]) as r:
            status = r.replica_status()
        if status is None or status.source != "{}:{}".format(*endpoint(addresses[host])):
            raise HostError(f"{replica} does not replicate from {host}")
        if not status.healthy:
            raise HostError(f"{replica}'s replication is broken: {status.last_error or 'stopped'}")
        if status.lag_seconds is None or status.lag_seconds > max_lag:
            raise HostError(f"{replica} is {status.lag_seconds}s behind (at most {max_lag}s)")
        return f"{replica} replicates from {host}, {status.lag_seconds}s behind"

    return Step(f"check {replica} replicates from {host} and is caught up", (replica,), check)


def plan_failover(
    source: ConfigSource,
    *,
    host: str,
    author: str,
    connect: Connect = MySQLHost,
    max_lag: int = 10,
    quiet_seconds: float = 0.5,
    catch_up_seconds: float = 30.0,
) -> Plan:
    """The plan to hand ``host``'s ranges to their replica. ``connect(address)`` opens an
    operator's connection to a server."""
    current = source.current(documents.SHARDS)
    document = current.document
    mastered, replica = master_and_replica(document, host)
    addresses = document["hosts"]
    master_address, replica_address = addresses[host], addresses[replica]
    ranges = [
        {**r, "master": replica, "slave": host} if r["master"] == host else r
        for r in document["ranges"]
    ]
    new = documents.validate(documents.SHARDS, {**document, "ranges": ranges})
    held: dict[str, Any] = {}

    def freeze() -> str:
        with connect(master_address) as m:
            m.set_read_only(True)
            before = m.gtid_binlog_pos()
            time.sleep(quiet_seconds)
            after = m.gtid_binlog_pos()
        if before != after:
            _thaw(connect, master_address)
            raise HostError(f"{host} still took writes while read_only (a privileged client?)")
        held["position"] = after
        return f"{host} read_only; at {after or 'an empty position'} for {quiet_seconds:g}s"

    def catch_up() -> str:
        with connect(replica_address) as r:
            caught_up = r.wait_for(held["position"], catch_up_seconds)
        if not caught_up:
            _thaw(connect, master_address)
            raise HostError(
                f"{replica} did not apply {held['position']} in {catch_up_seconds:g}s; {host} is writable again"
            )
        return f"{replica} has applied {held['position'] or 'everything'}"

    def promote() -> str:
        with connect(replica_address) as r:
            r.stop_replicating()
            r.set_read_only(False)
        return f"{replica} writable, replicating from no one"

    def repoint() -> str:
        with connect(master_address) as m, connect(replica_address) as r:
            m.set_semi_sync(False)  # a replica that waited for acks would stall its applier
            m.replicate_from(r)
            r.set_semi_sync(True)
        return f"{host} replicates from {replica} (semi-synchronously), read_only"

    shards = ", ".join(f"{r['range'][0]}..{r['range'][1]}" for r in mastered)
    change = f"shards {shards} mastered by {replica}"
    return Plan(
        "failover",
        f"fail over {host} to {replica} (shards {shards})",
        [
            check_replica_step(connect, document, host, replica, max_lag=max_lag),
            Step(
                f"set read_only on {host}; no write lands for {quiet_seconds:g}s", (host,), freeze
            ),
            Step(
                f"wait until {replica} has applied all of {host}'s writes (GTID)",
                (replica,),
                catch_up,
            ),
            publish_step(
                source,
                current,
                new,
                author=author,
                reason=f"fail over {host} to {replica}",
                change=change,
                hosts=(host, replica),
            ),
            Step(f"stop replication on {replica} and clear its read_only", (replica,), promote),
            Step(f"make {host} replicate from {replica}", (host, replica), repoint),
        ],
        {"host": host, "replica": replica},
    )


def _thaw(connect: Connect, address: str) -> None:
    with connect(address) as m:
        m.set_read_only(False)


def plan_emergency_failover(
    source: ConfigSource,
    *,
    host: str,
    author: str,
    connect: Connect = MySQLHost,
    apply_seconds: float = 30.0,
) -> Plan:
    """The plan to hand the ranges of ``host``, which cannot be reached, to the most
    advanced of its replicas."""
    current = source.current(documents.SHARDS)
    document = current.document
    addresses = document["hosts"]
    mastered = [r for r in document["ranges"] if r["master"] == host]
    if not mastered:
        raise InvalidTopology(f"host {host} is the master of no range")
    _check_unreachable(connect, host, addresses[host])
    candidates = sorted({r["slave"] for r in mastered if r.get("slave")})
    positions = {}
    for candidate in candidates:
        try:
            with connect(addresses[candidate]) as r:
                positions[candidate] = r.gtid_current_pos()
        except HostError:
            continue  # down too: not a candidate
    if not positions:
        raise HostError(f"no replica of {host} answers ({', '.join(candidates) or 'none named'})")
    replica = max(positions, key=lambda name: gtid_sequence(positions[name]))
    ranges = []
    for entry in document["ranges"]:
        if entry["master"] == host:
            entry = {"range": entry["range"], "master": replica}
        elif entry.get("slave") == host:
            entry = {"range": entry["range"], "master": entry["master"]}
        ranges.append(entry)
    out = sorted({*document.get("out_of_service", []), host})
    new = documents.validate(
        documents.SHARDS, {**document, "ranges": ranges, "out_of_service": out}
    )

    def confirm() -> str:
        _check_unreachable(connect, host, addresses[host])
        return f"{host} does not answer"

    def apply_received() -> str:
        with connect(addresses[replica]) as r:
            if not r.wait_relay_applied(apply_seconds):
                raise HostError(f"{replica} has not applied what it received in {apply_seconds:g}s")
            return f"{replica} has applied all it received, at {r.gtid_current_pos()}"

    def promote() -> str:
        with connect(addresses[replica]) as r:
            r.stop_replicating()
            # (semi-sync stays off, as on every replica: it has no replica to acknowledge.)
            r.set_read_only(False)
        return f"{replica} writable, replicating from no one (asynchronous until it has a replica)"

    shards = ", ".join(f"{r['range'][0]}..{r['range'][1]}" for r in mastered)
    ranked = ", ".join(f"{name} at {positions[name] or 'nothing'}" for name in positions)
    return Plan(
        "failover",
        f"emergency failover of {host} to {replica} (shards {shards})",
        [
            Step(f"confirm {host} does not answer", (host,), confirm),
            Step(
                f"let {replica} apply all it received from {host} (replicas: {ranked})",
                (replica,),
                apply_received,
            ),
            Step(f"stop replication on {replica} and clear its read_only", (replica,), promote),
            publish_step(
                source,
                current,
                new,
                author=author,
                reason=f"emergency failover of {host} to {replica}",
                change=f"shards {shards} mastered by {replica}; {host} out of service",
                hosts=(host, replica),
            ),
        ],
        {"host": host, "replica": replica, "emergency": True},
    )


def _check_unreachable(connect: Connect, host: str, address: str) -> None:
    try:
        with connect(address):
            pass
    except HostError:
        return
    raise InvalidTopology(
        f"{host} answers: fail it over as planned (without --emergency), which loses nothing"
    )
