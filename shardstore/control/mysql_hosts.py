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

    @property
    def healthy(self) -> bool:
        return self.io_running and self.sql_running and not self.last_error


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
        import MySQLdb
        import MySQLdb.cursors

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

    def value(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        rows = self.query(sql, params)
        return next(iter(rows[0].values())) if rows else None

    # -- state ------------------------------------------------------------------

    def read_only(self) -> bool:
        return bool(self.value("SELECT @@global.read_only"))

    def set_read_only(self, on: bool) -> None:
        self.query(f"SET GLOBAL read_only = {1 if on else 0}")

    def gtid_binlog_pos(self) -> str:
        """What this server has written to its binary log (its own and replicated writes)."""
        return str(self.value("SELECT @@global.gtid_binlog_pos") or "")

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
            str(row.get("Last_Error") or row.get("Last_IO_Error") or ""),
        )

    # -- replication --------------------------------------------------------------

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

    def stop_replicating(self) -> None:
        """Stop following anyone, and forget the source (a promoted replica)."""
        self.query("STOP SLAVE")
        self.query("RESET SLAVE ALL")
