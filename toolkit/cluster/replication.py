"""The replicas of the local cluster: ``up`` returns only once each one's I/O and SQL threads
run, and ``status`` shows each one's state and the health of each pair of the shard map in
force (``shardstore.control.pairs``: a master without a healthy replica is reported).

A restarted replica's threads do not start with it (``skip_slave_start``: a start with
both stopped would delete its relay log, ``toolkit.cluster.mysql``), and one whose source
was restarted reconnects only after ``Connect_Retry`` seconds, a minute unless told
otherwise; a failover tried meanwhile is refused ("replication is broken"). So ``up``
starts replication again where it does not run, the kept relay log applied first,
retrying its source every second, and waits for it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, TextIO

from shardstore.control import documents
from shardstore.control.config_source import ConfigError
from shardstore.control.mysql_hosts import admin
from shardstore.control.pairs import Pair, pair_health
from shardstore.control.sources import open_source
from toolkit.cluster import mysql
from toolkit.cluster.state import Cluster

#: How long ``up`` waits for every replica's threads to run.
WAIT_SECONDS = 60.0


@dataclass(frozen=True)
class Replica:
    """One replica's replication, as ``SHOW SLAVE STATUS`` has it."""

    name: str
    source: str  # the cluster's server it follows ("db1a"), or host:port
    io: str  # Yes, No or Connecting
    sql: str  # Yes or No
    behind: int | None  # seconds behind its source; None while a thread is stopped
    error: str

    @property
    def running(self) -> bool:
        return self.io == "Yes" and self.sql == "Yes"

    def line(self) -> str:
        behind = "-" if self.behind is None else f"{self.behind}s"
        return (
            f"{self.name:<14} {self.source:<14} {self.io:<10} {self.sql:<4} {behind:<7}"
            f" {self.error or '-'}"
        )


def _replica(cluster: Cluster, name: str, status: dict[str, Any]) -> Replica:
    servers = {cluster.port(n): n for n in cluster.mysql_servers}
    port = int(status["Master_Port"])
    lag = status["Seconds_Behind_Master"]
    return Replica(
        name,
        servers.get(port) or f"{status['Master_Host']}:{port}",
        str(status["Slave_IO_Running"]),
        str(status["Slave_SQL_Running"]),
        None if lag is None else int(lag),
        str(status["Last_IO_Error"] or status["Last_SQL_Error"] or ""),
    )


def replicas(cluster: Cluster) -> list[Replica]:
    """Every running MariaDB server that follows another (a master follows no one); one
    that does not answer is shown with why, as not replicating."""
    import MySQLdb

    found = []
    for name in cluster.mysql_servers:
        if not cluster.running(name):
            continue
        try:
            status = mysql.replica_status(cluster.port(name), cluster.secrets["root"])
        except MySQLdb.Error as error:
            found.append(Replica(name, "?", "?", "?", None, f"does not answer: {error}"))
            continue
        if status is not None:
            found.append(_replica(cluster, name, status))
    return found


def resume(cluster: Cluster, out: TextIO) -> None:
    """Start replication again on each replica where it does not run (or retries its
    source only every minute)."""
    for name in cluster.mysql_servers:
        if cluster.running(name):
            was = mysql.resume(cluster.port(name), cluster.secrets["root"])
            if was is not None:
                replica = _replica(cluster, name, was)
                out.write(
                    f"  {name} replicates from {replica.source} again, retrying every"
                    f" {mysql.CONNECT_RETRY}s (it was: I/O {replica.io}, SQL {replica.sql})\n"
                )


def wait_running(cluster: Cluster, timeout: float = WAIT_SECONDS) -> list[Replica]:
    """Wait until every replica's I/O and SQL threads run; RuntimeError naming each one
    that does not, and why, after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = replicas(cluster)
        stalled = [replica for replica in found if not replica.running]
        if not stalled:
            return found
        if time.monotonic() > deadline:
            lines = "\n".join(f"  {replica.line()}" for replica in stalled)
            raise RuntimeError(
                f"replication does not run after {timeout:.0f}s (replica, source, I/O, SQL,"
                f" behind, last error):\n{lines}"
            )
        time.sleep(0.1)


def report(found: list[Replica], out: TextIO) -> None:
    """Each replica's replication, one line each, as ``status`` shows it."""
    out.write(f"\n{'REPLICA':<14} {'SOURCE':<14} {'I/O':<10} {'SQL':<4} {'BEHIND':<7} LAST ERROR\n")
    for replica in found:
        out.write(replica.line() + "\n")
    if not found:
        out.write("(no server replicates)\n")


def pairs(cluster: Cluster) -> list[Pair]:
    """The pairs of the shard map in force, as ``shardstore pairs`` judges them."""
    env = cluster.env()
    source = open_source(env["PINBOARD_TOPOLOGY"])
    try:
        document = source.current(documents.SHARDS).document
    finally:
        source.close()
    return pair_health(document, admin(env["PINBOARD_MYSQL_ADMIN"]))


def report_pairs(cluster: Cluster, out: TextIO) -> bool:
    """Each master of the map with its replica and named streams (``BAD`` and why, if it is
    not backed up or a stream is broken); whether all are well."""
    out.write("\nPAIRS (shard map in force)\n")
    try:
        found = pairs(cluster)
    except ConfigError as exc:
        out.write(f"BAD  the shard map cannot be read: {exc}\n")
        return False
    for pair in found:
        out.write(f"{'ok ' if pair.healthy and pair.streams_healthy else 'BAD'}  {pair.text()}\n")
    return all(pair.healthy and pair.streams_healthy for pair in found)
