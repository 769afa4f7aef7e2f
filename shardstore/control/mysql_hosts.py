"""An operator's connection to one MySQL (MariaDB) server: read-only flag, GTID positions,
replication. The operations (failover, split) are written in these terms.

This is not the store's pooled connection: it is opened for one operation, as
the administrator (``MySQLHost(address, user=..., password=...)``; by default
the credentials in the host's address), with short timeouts, and closed.

MariaDB's GTIDs: ``@@gtid_binlog_pos`` is what a server has written to its own
binary log, ``@@gtid_current_pos`` what it has applied (written or
replicated), and ``MASTER_GTID_WAIT(pos, timeout)`` waits until a replica has
applied ``pos``. A replica follows its source with ``MASTER_USE_GTID``, so
repointing one needs no binary log file name or offset.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from ..exceptions import ShardStoreError

CONNECT_TIMEOUT = 2  # seconds (MySQL counts whole seconds)


class HostError(ShardStoreError):
    """A MySQL server refused or failed an operator's command; the message names it."""


@dataclass(frozen=True)
class ReplicaStatus:
    """A replica's view of its replication (``SHOW SLAVE STATUS``)."""

    source: str  # host:port
    io_running: bool
    sql_running: bool
    lag_seconds: int | None  # None while the SQL thread is stopped
    last_error: str
    #: Whether the SQL thread has applied everything the I/O thread received.
    relay_applied: bool = True

    @property
    def healthy(self) -> bool:
        return self.io_running and self.sql_running and not self.last_error


@dataclass(frozen=True)
class SnapshotPosition:
    """Where a consistent snapshot reads, in the master's binary log and as GTIDs."""

    file: str
    offset: int
    gtid: str


def admin(credentials: str | None) -> Callable[[str], MySQLHost]:
    """Operators' connections as ``user:password`` (the site's own user in the shard map
    has no privilege that ``read_only`` lets through, so it cannot fail a host over);
    None: the credentials in each host's address."""
    if not credentials:
        return MySQLHost
    user, _, password = credentials.partition(":")

    def connect(address: str) -> MySQLHost:
        return MySQLHost(address, user=user, password=password)

    return connect


def endpoint(address: str) -> tuple[str, int]:
    """The ``(host, port)`` of a ``mysql://`` address."""
    parts = urlsplit(address)
    return parts.hostname or "127.0.0.1", parts.port or 3306


class MySQLHost:
    """One server, for an operator's commands."""

    def __init__(
        self,
        address: str,
        *,
        user: str | None = None,
        password: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        try:
            import MySQLdb
            import MySQLdb.cursors
        except ImportError:
            raise HostError("operations on MySQL hosts need mysqlclient") from None

        parts = urlsplit(address)
        self.address = address
        self.host, self.port = endpoint(address)
        self.user = user or unquote(parts.username or "root")
        self.password = password if password is not None else unquote(parts.password or "")
        try:
            self._connection = MySQLdb.connect(
                host=self.host,
                port=self.port,
                user=self.user,
                password=self.password,
                connect_timeout=CONNECT_TIMEOUT,
                read_timeout=max(1, int(timeout)),
                autocommit=True,
                cursorclass=MySQLdb.cursors.DictCursor,
            )
        except MySQLdb.Error as exc:
            raise HostError(f"{self.host}:{self.port} cannot be reached: {exc}") from None

    def __enter__(self) -> MySQLHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._connection.close()

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        import MySQLdb

        try:
            cursor = self._connection.cursor()
            cursor.execute(sql, params or None)
            rows = list(cursor.fetchall() or [])
        except MySQLdb.Error as exc:
            raise HostError(f"{self.host}:{self.port}: {sql.split()[0]}: {exc}") from None
        return rows

    def executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        import MySQLdb

        try:
            self._connection.cursor().executemany(sql, rows)
        except MySQLdb.Error as exc:
            raise HostError(f"{self.host}:{self.port}: {sql.split()[0]}: {exc}") from None

    def value(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        rows = self.query(sql, params)
        return next(iter(rows[0].values())) if rows else None

    # -- state ------------------------------------------------------------------

    def databases(self) -> set[str]:
        return {
            str(r["name"])
            for r in self.query("SELECT schema_name AS name FROM information_schema.schemata")
        }

    def read_only(self) -> bool:
        return bool(self.value("SELECT @@global.read_only"))

    def set_read_only(self, on: bool) -> None:
        self.query(f"SET GLOBAL read_only = {1 if on else 0}")

    def gtid_binlog_pos(self) -> str:
        """What this server has written to its binary log (its own and replicated writes)."""
        return str(self.value("SELECT @@global.gtid_binlog_pos") or "")

    def snapshot_position(self) -> SnapshotPosition | None:
        """Where the consistent snapshot open on this connection reads (after ``START
        TRANSACTION WITH CONSISTENT SNAPSHOT``); None without a binary log."""
        status = {
            str(r["Variable_name"]).lower(): r["Value"]
            for r in self.query("SHOW STATUS LIKE 'binlog_snapshot_%'")
        }
        file, offset = status.get("binlog_snapshot_file"), status.get("binlog_snapshot_position")
        if not file:
            return None
        offset = int(offset or 0)
        gtid = self.value("SELECT BINLOG_GTID_POS(%s, %s)", (file, offset))
        return SnapshotPosition(str(file), offset, str(gtid or ""))

    def gtid_current_pos(self) -> str:
        return str(self.value("SELECT @@global.gtid_current_pos") or "")

    def replica_status(self) -> ReplicaStatus | None:
        """None if this server replicates from no one."""
        rows = self.query("SHOW SLAVE STATUS")
        if not rows:
            return None
        row = rows[0]
        lag = row.get("Seconds_Behind_Master")
        return ReplicaStatus(
            f"{row.get('Master_Host')}:{row.get('Master_Port')}",
            row.get("Slave_IO_Running") == "Yes",
            row.get("Slave_SQL_Running") == "Yes",
            None if lag is None else int(lag),
            str(row.get("Last_SQL_Error") or row.get("Last_IO_Error") or ""),
            row.get("Master_Log_File") == row.get("Relay_Master_Log_File")
            and row.get("Read_Master_Log_Pos") == row.get("Exec_Master_Log_Pos"),
        )

    # -- replication --------------------------------------------------------------

    def wait_relay_applied(self, timeout: float) -> bool:
        """Wait until the SQL thread has applied all that the I/O thread received (its
        source is gone: nothing more will come). Whether it did in time."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.replica_status()
            if status is None or status.relay_applied:
                return True
            if status.last_error and not status.sql_running:
                raise HostError(
                    f"{self.host}:{self.port}: replication stopped: {status.last_error}"
                )
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)

    def wait_for(self, gtid_pos: str, timeout: float) -> bool:
        """Wait until this replica has applied ``gtid_pos``; whether it did in time."""
        if not gtid_pos:
            return True
        result = self.value("SELECT MASTER_GTID_WAIT(%s, %s)", (gtid_pos, timeout))
        return bool(result == 0)

    def replicate_from(self, source: MySQLHost) -> None:
        """Follow ``source`` from where this server's GTID position stands."""
        self.query("STOP SLAVE")
        self.query(
            "CHANGE MASTER TO MASTER_HOST=%s, MASTER_PORT=%s, MASTER_USER=%s,"
            " MASTER_PASSWORD=%s, MASTER_USE_GTID=current_pos",
            (source.host, source.port, source.user, source.password),
        )
        self.query("START SLAVE")

    def set_semi_sync(self, on: bool) -> None:
        """Whether commits wait for a replica's acknowledgement (semi-synchronous). On a
        master with a replica only: on a replica it would hold back the applier (MariaDB
        waits for acks of replicated commits too), and with no replica every commit would
        wait for the timeout."""
        self.query(f"SET GLOBAL rpl_semi_sync_master_enabled = {1 if on else 0}")

    def stop_replicating(self) -> None:
        """Stop following anyone, and forget the source (a promoted replica)."""
        self.query("STOP SLAVE")
        self.query("RESET SLAVE ALL")


def gtid_sequence(position: str) -> int:
    """How far a GTID position has got: the sum of its sequence numbers over domains
    (``0-1-120,1-2-7`` -> 127), enough to rank replicas of one master."""
    total = 0
    for gtid in filter(None, (part.strip() for part in position.split(","))):
        total += int(gtid.rsplit("-", 1)[1])
    return total
