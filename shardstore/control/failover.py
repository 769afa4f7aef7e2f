"""Failover: a master's replica takes over its shards (after pinterest/mysql_utils'
``mysql_failover``), planned or in an emergency.

Planned (``plan_failover``: the master is retired, or needs maintenance). The replica
promoted is the one named (``to``), or the named replica that received the most; the
master's other replicas follow it afterwards. Steps:

1. check every replica: it replicates from the master, both threads run, no error,
   lag at most ``max_lag`` seconds;
2. set ``read_only`` on the master (waiting at most ``FENCE_SECONDS`` for running
   commits), end every client session there, and confirm that no write lands for
   a short window (its GTID position stands still): from here, writes to these
   shards fail with a typed error the site turns into a retry, never a silent loss;
3. wait until every replica has applied the master's last transaction (GTID);
4. turn the range round: the replica stops replicating, the old master and the other
   replicas replicate from it (GTID), and it waits for their acknowledgements;
5. publish the shard map with the replica as master (the other replicas and the old
   master its replicas): every process switches within a second;
6. clear the new master's ``read_only``.

Step 5 is the commit point: once the map names the replica, it stands. Any failure
before it, and the operator's Ctrl-C or SIGTERM, undoes every step done so far
(``plans.run``): the range turned back, the master writable again. A run that
fails or dies after it (or inside it, once the map is published) is finished by
``resume`` and never undone by ``abort``: writes may have been acknowledged on the
new master. Turning the range back waits until the old master holds everything the
replica's binary log holds (it may have taken writes), and refuses otherwise. The
range replicates in one direction or the other at every step, so "fail over again
the other way" works after a run too.

Emergency failover, for a master that cannot be reached, is in emergency.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..durability import of_master
from ..exceptions import InvalidTopology
from ..replicas import replicas_of, with_replicas
from . import documents
from .config_source import ConfigSource, Revision
from .mysql_hosts import HostError, MySQLHost, endpoint, gtid_domains
from .plans import Plan, Step
from .publish import publish_step

Connect = Callable[[str], MySQLHost]


def master_and_replicas(
    document: dict[str, Any], host: str, to: str | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """The ranges ``host`` masters, and the replicas they all name (a planned failover or
    a split hands them to one of these: ``to``, if named, must be one)."""
    mastered = [r for r in document["ranges"] if r["master"] == host]
    if not mastered:
        raise InvalidTopology(f"host {host} is the master of no range")
    named = {tuple(replicas_of(r)) for r in mastered}
    if len(named) != 1 or not next(iter(named)):
        raise InvalidTopology(
            f"the ranges of {host} need the same replicas, and one at least, not {sorted(named)}"
        )
    replicas = list(named.pop())
    if to is not None and to not in replicas:
        raise InvalidTopology(f"{to} is not a replica of {host} (its replicas: {', '.join(replicas)})")  # fmt: skip
    return mastered, replicas


def most_received(connect: Connect, document: dict[str, Any], replicas: list[str]) -> str:
    """The replica that received the most from its master (by GTID, domain by domain; the
    map's order breaks a tie); one that cannot be asked counts as having received nothing."""

    def received(name: str) -> int:
        try:
            with connect(document["hosts"][name]) as r:
                status = r.replica_status()
        except HostError:
            return -1
        return sum(n for _, n in gtid_domains(status.received).values()) if status else -1

    counts = {name: received(name) for name in replicas}
    return max(replicas, key=lambda name: (counts[name], -replicas.index(name)))


def check_replica_step(
    connect: Connect, document: dict[str, Any], host: str, replica: str, *, max_lag: int
) -> Step:
    """The first step of a planned failover or a split: ``replica`` follows ``host``,
    healthy, at most ``max_lag`` seconds behind."""
    addresses = document["hosts"]

    def check() -> str:
        with connect(addresses[replica]) as r:
            if not r.replication:  # the pair is turned round (or back) as that account
                raise HostError(
                    "no replication account: set PINBOARD_MYSQL_REPLICATION (user:password)"
                )
            status = r.replica_status()
        if status is None or status.source != "{}:{}".format(*endpoint(addresses[host])):
            raise HostError(f"{replica} does not replicate from {host}")
        if not status.healthy:
            hint = (  # its source lost: the master's commits wait for an ack no one sends
                f"; if no replica receives from {host}, none of its waiting commits was"
                f" acknowledged: `failover {host} --emergency` fences it and promotes"
                if status.lost_source
                else ""
            )
            raise HostError(f"{replica}'s replication is broken: {status.last_error or 'stopped'}{hint}")  # fmt: skip
        if status.lag_seconds is None or status.lag_seconds > max_lag:
            raise HostError(f"{replica} is {status.lag_seconds}s behind (at most {max_lag}s)")
        return f"{replica} replicates from {host}, {status.lag_seconds}s behind"

    return Step(f"check {replica} replicates from {host} and is caught up", (replica,), check)


def plan_failover(
    source: ConfigSource,
    *,
    host: str,
    author: str,
    to: str | None = None,
    connect: Connect = MySQLHost,
    max_lag: int = 10,
    quiet_seconds: float = 0.5,
    catch_up_seconds: float = 30.0,
    base: Revision | None = None,
) -> Plan:
    """The plan to hand ``host``'s ranges to a replica (``to``, else the one that received
    the most). ``connect(address)`` opens an operator's connection to a server. ``base``:
    the shard map to plan from (default: the one in force; ``recovery.py`` plans a dead
    run again from the map it began with, and its ``replica``)."""
    current = base or source.current(documents.SHARDS)
    document = current.document
    mastered, named = master_and_replicas(document, host, to)
    replica = to or most_received(connect, document, named)
    others = [name for name in named if name != replica]
    durability = of_master(document, host)  # the promoted replica keeps it
    addresses = document["hosts"]
    master_address, replica_address = addresses[host], addresses[replica]
    ranges = [
        with_replicas({**r, "master": replica}, [*others, host]) if r["master"] == host else r
        for r in document["ranges"]
    ]
    new = documents.validate(documents.SHARDS, {**document, "ranges": ranges})
    held: dict[str, Any] = {}

    def freeze() -> str:
        with connect(master_address) as m:
            m.set_read_only(True)
            ended = m.kill_client_sessions()
            before = m.gtid_binlog_pos()
            time.sleep(quiet_seconds)
            after = m.gtid_binlog_pos()
        if before != after:
            raise HostError(f"{host} still took writes while read_only (a privileged client?)")
        held["position"] = after
        return (
            f"{host} read_only, {ended} client sessions ended;"
            f" at {after or 'an empty position'} for {quiet_seconds:g}s"
        )

    def thaw() -> str:
        with connect(master_address) as m:
            m.set_read_only(False)
        return f"{host} writable again"

    def catch_up() -> str:
        for name in named:
            with connect(addresses[name]) as r:
                caught_up = r.wait_for(held["position"], catch_up_seconds)
            if not caught_up:
                raise HostError(f"{name} did not apply {held['position']} in {catch_up_seconds:g}s")  # fmt: skip
        return f"{', '.join(named)} applied {held['position'] or 'everything'}"

    def swap() -> str:
        with connect(master_address) as m, connect(replica_address) as r:
            r.stop_replicating()
            m.set_semi_sync(False)  # a replica that waited for acks would stall its applier
            m.replicate_from(r)
            for name in others:
                with connect(addresses[name]) as other:
                    other.replicate_from(r, position="slave_pos")
            r.set_semi_sync(True, durability)
        return f"{', '.join([*others, host])} replicate from {replica}, which waits for their acknowledgements"  # fmt: skip

    def swap_back() -> str:
        with connect(master_address) as m, connect(replica_address) as r:
            # Stopping replication drops relay logs not yet applied: first the old master
            # must hold all the replica wrote (nothing, unless it took writes meanwhile).
            r.set_read_only(True)
            position = r.gtid_binlog_pos()
            if m.replica_status() is not None and not _logged(m, position, catch_up_seconds):
                raise HostError(
                    f"{host} has not applied {replica}'s {position} in {catch_up_seconds:g}s:"
                    " the range is left as it is, so as to lose nothing"
                )
            r.set_semi_sync(False)
            m.stop_replicating()
            r.replicate_from(m)
            for name in others:
                with connect(addresses[name]) as other:
                    other.replicate_from(m, position="slave_pos")
            m.set_semi_sync(True, durability)
        return f"{', '.join(named)} replicate from {host} again"

    def open_new() -> str:
        with connect(replica_address) as r:
            r.set_read_only(False)
        return f"{replica} writable"

    def close_new() -> str:
        with connect(replica_address) as r:
            r.set_read_only(True)
        return f"{replica} read_only again"

    shards = ", ".join(f"{r['range'][0]}..{r['range'][1]}" for r in mastered)
    change = f"shards {shards} mastered by {replica}"
    followers = ", ".join([*others, host])
    return Plan(
        "failover",
        f"fail over {host} to {replica} (shards {shards})",
        [
            *(check_replica_step(connect, document, host, name, max_lag=max_lag) for name in named),
            Step(
                f"set read_only on {host}, end its client sessions; no write lands for"
                f" {quiet_seconds:g}s",
                (host,),
                freeze,
                thaw,
            ),
            Step(
                f"wait until {', '.join(named)} {'has' if len(named) == 1 else 'have'} applied all of {host}'s writes (GTID)",
                tuple(named),
                catch_up,
            ),
            Step(f"make {followers} replicate from {replica}", (host, *named), swap, swap_back),
            publish_step(
                source,
                current,
                new,
                author=author,
                reason=f"fail over {host} to {replica}",
                change=change,
                hosts=(host, *named),
                commits=True,
            ),
            Step(f"clear {replica}'s read_only", (replica,), open_new, close_new),
        ],
        {"host": host, "replica": replica, "base": current.version},
    )


def _logged(server: MySQLHost, position: str, timeout: float) -> bool:
    """Wait until ``server``'s binary log holds ``position``, domain by domain, whether it
    wrote the transactions itself or applied them (``MASTER_GTID_WAIT`` knows only what it
    applied): whether it did in time."""
    wanted = gtid_domains(position)
    deadline = time.monotonic() + timeout
    while True:
        have = gtid_domains(server.gtid_binlog_pos())
        if all(have.get(d, (0, 0))[1] >= n for d, (_, n) in wanted.items()):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
