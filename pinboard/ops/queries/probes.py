"""A short look at one MySQL host: does it answer, is it read-only, is it replicating (by
its default connection and by every named one: MariaDB's multi-source replication, a
split's reverse stream), do its commits wait for a replica (semi-sync), and how many wait.

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
from shardstore.control.pairs import Look, Stream

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
    received: str = ""  # what its I/O thread has received (MariaDB's ``Gtid_IO_Pos``)
    connection: str = ""  # "": the default connection; else a named one (multi-source)
    filter: str = ""  # its replicate_wild_do_table (a reverse stream's shards)

    def status(self) -> ReplicaStatus:
        """As the pair health check (``shardstore.control.pairs``) reads it."""
        return ReplicaStatus(
            source=self.source,
            io_running=self.io_running == "Yes",
            sql_running=self.sql_running == "Yes",
            lag_seconds=self.lag_seconds,
            last_error=self.last_error,
            io_state=self.io_running,
        )


@dataclass(frozen=True, kw_only=True)
class Probe:
    reachable: bool
    embedded: bool = False  # a SQLite directory: no read_only flag, no replication
    error: str = ""
    read_only: bool | None = None
    replication: Replication | None = None  # None: not a replica
    streams: tuple[Replication, ...] = ()  # its named connections
    semi_sync: SemiSync | None = None  # as a master
    #: Sessions waiting for a replica's acknowledgement now, and commits acknowledged
    #: since the server started (``Rpl_semi_sync_master_wait_sessions``, ``_yes_tx``).
    semi_sync_waiting: int | None = None
    semi_sync_acknowledged: int | None = None

    def look(self) -> Look:
        """What the pair health check (``shardstore.control.pairs``) judges."""
        if not self.reachable:
            return Look(error=self.error)
        repl = self.replication
        streams = tuple(Stream("", s.connection, s.status(), s.filter) for s in self.streams)
        return Look(
            replication=None if repl is None else repl.status(),
            semi_sync=self.semi_sync,
            streams=streams,
        )


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
        rows = _connections(cursor, MySQLdb.ProgrammingError)
        semi_sync, counts = _semi_sync(cursor)
    except MySQLdb.Error as exc:
        return Probe(reachable=False, error=_message(exc))
    finally:
        connection.close()
    found = [repl for repl in map(_replication, rows) if repl is not None]
    return Probe(
        reachable=True,
        read_only=read_only,
        replication=next((r for r in found if not r.connection), None),
        streams=tuple(r for r in found if r.connection),
        semi_sync=semi_sync,
        semi_sync_waiting=counts.get("rpl_semi_sync_master_wait_sessions"),
        semi_sync_acknowledged=counts.get("rpl_semi_sync_master_yes_tx"),
    )


def _connections(cursor: Any, unknown: type[Exception]) -> list[dict[str, Any]]:
    """Every replication connection's status: MariaDB's default one and its named ones
    (``SHOW ALL SLAVES STATUS``), or the one of a server without multi-source."""
    for statement in ("SHOW ALL SLAVES STATUS", "SHOW REPLICA STATUS", "SHOW SLAVE STATUS"):
        try:
            cursor.execute(statement)  # MariaDB; MySQL 8.0.22+ and MariaDB 10.5+; older
        except unknown:
            continue
        return list(cursor.fetchall() or [])
    return []


def _semi_sync(cursor: Any) -> tuple[SemiSync | None, dict[str, int]]:
    """The master side of semi-sync (None where the server has no such plugin), and its
    counts: clients, waiting sessions, acknowledged commits."""
    cursor.execute(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('Rpl_semi_sync_master_clients',"
        " 'Rpl_semi_sync_master_wait_sessions', 'Rpl_semi_sync_master_yes_tx',"
        " 'Rpl_semi_sync_master_status')"
    )
    status = {str(r["Variable_name"]).lower(): str(r["Value"]) for r in cursor.fetchall()}
    counts = {k: int(v) for k, v in status.items() if v.isdigit()}
    cursor.execute(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('rpl_semi_sync_master_enabled',"
        " 'rpl_semi_sync_master_wait_no_slave', 'rpl_semi_sync_master_timeout')"
    )
    variables = {str(r["Variable_name"]).lower(): str(r["Value"]) for r in cursor.fetchall()}
    if "rpl_semi_sync_master_clients" not in counts or len(variables) < 3:
        return None, counts
    enabled = variables["rpl_semi_sync_master_enabled"] == "ON"
    falls_back = variables["rpl_semi_sync_master_wait_no_slave"] == "OFF"
    return SemiSync(
        enabled=enabled,
        falls_back=falls_back,
        replicas=counts["rpl_semi_sync_master_clients"],
        timeout_ms=int(variables["rpl_semi_sync_master_timeout"]),
        degraded=enabled and not falls_back and status.get("rpl_semi_sync_master_status") == "OFF",
    ), counts


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
        last_error=str(
            field("Last_Error", "Last_Error") or field("Last_IO_Error", "Last_IO_Error") or ""
        ),
        connection=str(field("Connection_name", "Channel_Name") or ""),
        received=str(field("Gtid_IO_Pos", "Gtid_IO_Pos") or ""),
        filter=str(field("Replicate_Wild_Do_Table", "Replicate_Wild_Do_Table") or ""),
    )


def _message(exc: Exception) -> str:
    return str(exc.args[-1]) if exc.args else type(exc).__name__
