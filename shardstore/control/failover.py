"""Planned failover: a master is retired and its replica takes over its shards (after
pinterest/mysql_utils' ``mysql_failover``).

Steps, in order:

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
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..exceptions import InvalidTopology
from . import documents
from .mysql_hosts import HostError, MySQLHost, endpoint
from .plans import Plan, Step
from .publish import publish_step
from .sources import ConfigSource

Connect = Callable[[str], MySQLHost]


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
    mastered = [r for r in document["ranges"] if r["master"] == host]
    if not mastered:
        raise InvalidTopology(f"host {host} is the master of no range")
    replicas = {r.get("slave") for r in mastered}
    if len(replicas) != 1 or None in replicas:
        raise InvalidTopology(
            f"the ranges of {host} need one replica to fail over to, not {sorted(map(str, replicas))}"
        )
    replica = str(replicas.pop())
    addresses = document["hosts"]
    master_address, replica_address = addresses[host], addresses[replica]
    ranges = [
        {**r, "master": replica, "slave": host} if r["master"] == host else r
        for r in document["ranges"]
    ]
    new = documents.validate(documents.SHARDS, {**document, "ranges": ranges})
    held: dict[str, Any] = {}

    def check() -> str:
        with connect(replica_address) as r:
            status = r.replica_status()
        if status is None or status.source != "{}:{}".format(*endpoint(master_address)):
            raise HostError(f"{replica} does not replicate from {host}")
        if not status.healthy:
            raise HostError(f"{replica}'s replication is broken: {status.last_error or 'stopped'}")
        if status.lag_seconds is None or status.lag_seconds > max_lag:
            raise HostError(f"{replica} is {status.lag_seconds}s behind (at most {max_lag}s)")
        return f"{replica} replicates from {host}, {status.lag_seconds}s behind"

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
            m.replicate_from(r)
        return f"{host} replicates from {replica}, read_only"

    shards = ", ".join(f"{r['range'][0]}..{r['range'][1]}" for r in mastered)
    change = f"shards {shards} mastered by {replica}"
    return Plan(
        "failover",
        f"fail over {host} to {replica} (shards {shards})",
        [
            Step(f"check {replica} replicates from {host} and is caught up", (replica,), check),
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
