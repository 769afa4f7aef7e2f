"""A short look at one MySQL host: does it answer, is it read-only, is it replicating, do
its commits wait for a replica (semi-sync).

The console probes every host of the map on each overview, so a probe opens
its own connection with a one-second timeout (the store's pooled connections
wait longer, and a replica has none) and closes it, as the operators' MySQL user
(``SHARDSTORE["MYSQL_ADMIN"]``: the site's own user may not read replication
status) when one is set. SQLite hosts are
directories of the embedded default: "reachable" means the directory is
there; they have no read-only flag or replication.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from django.conf import settings

from shardstore.control.mysql_hosts import ReplicaStatus, SemiSync
from shardstore.control.pairs import Look

#: Seconds a probe waits for a host to accept a connection (MySQL counts whole seconds).
CONNECT_TIMEOUT = 1
READ_TIMEOUT = 2


@dataclass(frozen=True)
class Replication:
    """A replica's side of replication (``SHOW REPLICA STATUS``)."""

    source: str  # host:port it replicates from
    io_running: str  # "Yes", "No", "Connecting"
    sql_running: str
    lag_seconds: int | None  # None while the SQL thread is stopped
    last_error: str


@dataclass(frozen=True, kw_only=True)
class Probe:
    reachable: bool
    embedded: bool = False  # a SQLite directory: no read_only flag, no replication
    error: str = ""
    read_only: bool | None = None
    replication: Replication | None = None  # None: not a replica
    semi_sync: SemiSync | None = None  # as a master

    def look(self) -> Look:
        """What the pair health check (``shardstore.control.pairs``) judges."""
        if not self.reachable:
            return Look(error=self.error)
        repl, status = self.replication, None
        if repl is not None:
            status = ReplicaStatus(
                source=repl.source,
                io_running=repl.io_running == "Yes",
                sql_running=repl.sql_running == "Yes",
                lag_seconds=repl.lag_seconds,
                last_error=repl.last_error,
                io_state=repl.io_running,
            )
        return Look(replication=status, semi_sync=self.semi_sync)


def probe(address: str) -> Probe:
    """What one host of the shard map says about itself, within about a second."""
    if address.startswith("sqlite://"):
        directory = Path(address.removeprefix("sqlite://"))
        if directory.is_dir():
            return Probe(reachable=True, embedded=True)
        return Probe(reachable=False, embedded=True, error=f"no directory {directory}")
    if address.startswith("mysql://"):
        return _probe_mysql(address)
    return Probe(reachable=False, error=f"unknown address scheme: {address.split('://', 1)[0]}")


def _probe_mysql(address: str) -> Probe:
    try:
        import MySQLdb
        import MySQLdb.cursors
    except ImportError:
        return Probe(reachable=False, error="mysqlclient is not installed (requirements-mysql.txt)")
    parts = urlsplit(address)
    user, password = unquote(parts.username or "root"), unquote(parts.password or "")
    if settings.SHARDSTORE.get("MYSQL_ADMIN"):
        user, _, password = settings.SHARDSTORE["MYSQL_ADMIN"].partition(":")
    try:
        connection = MySQLdb.connect(
            host=parts.hostname or "127.0.0.1",
            port=parts.port or 3306,
            user=user,
            password=password,
            connect_timeout=CONNECT_TIMEOUT,
            read_timeout=READ_TIMEOUT,
            cursorclass=MySQLdb.cursors.DictCursor,
        )
    except MySQLdb.Error as exc:
        return Probe(reachable=False, error=_message(exc))
    try:
        cursor = connection.cursor()
        cursor.execute("SELECT @@read_only AS read_only")
        read_only = bool(cursor.fetchone()["read_only"])
        try:
            cursor.execute("SHOW REPLICA STATUS")  # MySQL 8.0.22+, MariaDB 10.5+
        except MySQLdb.ProgrammingError:
            cursor.execute("SHOW SLAVE STATUS")  # older servers
        status = cursor.fetchone()
        semi_sync = _semi_sync(cursor)
    except MySQLdb.Error as exc:
        return Probe(reachable=False, error=_message(exc))
    finally:
        connection.close()
    return Probe(
        reachable=True, read_only=read_only, replication=_replication(status), semi_sync=semi_sync
    )


def _semi_sync(cursor: Any) -> SemiSync | None:
    """The master side of semi-sync (None where the server has no such plugin)."""
    cursor.execute("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_clients'")
    clients = cursor.fetchone()
    cursor.execute(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN"
        " ('rpl_semi_sync_master_enabled', 'rpl_semi_sync_master_wait_no_slave')"
    )
    variables = {str(r["Variable_name"]).lower(): str(r["Value"]) for r in cursor.fetchall()}
    if clients is None or len(variables) < 2:
        return None
    return SemiSync(
        enabled=variables["rpl_semi_sync_master_enabled"] == "ON",
        falls_back=variables["rpl_semi_sync_master_wait_no_slave"] == "OFF",
        replicas=int(clients["Value"]),
    )


def _replication(status: dict[str, Any] | None) -> Replication | None:
    """The fields the console shows, under MySQL's new names or the old ones (MariaDB)."""
    if not status:
        return None

    def field(new: str, old: str) -> Any:
        value = status.get(new, status.get(old))
        return value.decode() if isinstance(value, bytes) else value

    lag = field("Seconds_Behind_Source", "Seconds_Behind_Master")
    return Replication(
        source=f"{field('Source_Host', 'Master_Host')}:{field('Source_Port', 'Master_Port')}",
        io_running=str(field("Replica_IO_Running", "Slave_IO_Running")),
        sql_running=str(field("Replica_SQL_Running", "Slave_SQL_Running")),
        lag_seconds=None if lag is None else int(lag),
        last_error=str(field("Last_Error", "Last_Error") or ""),
    )


def _message(exc: Exception) -> str:
    return str(exc.args[-1]) if exc.args else type(exc).__name__
