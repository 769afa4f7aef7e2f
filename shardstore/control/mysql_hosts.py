"""An operator's connection to one MySQL (MariaDB) server: read-only flag, GTID positions,
replication. The operations (failover, split) are written in these terms.

This is not the store's pooled connection: it is opened for one operation, as
the administrator (``MySQLHost(address, user=..., password=...)``; by default
the credentials in the host's address), with short timeouts, and closed. Opened
within a run, it first claims its server for the run's term (terms.py).

MariaDB's GTIDs: ``@@gtid_binlog_pos`` is what a server has written to its own binary
log, ``@@gtid_current_pos`` what it has applied (written or replicated), and
``MASTER_GTID_WAIT(pos, timeout)`` waits until a replica has applied ``pos``. A replica
follows its source with ``MASTER_USE_GTID``: repointing one needs no file or offset.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from ..durability import NO_FALLBACK_MS, STRICT, Durability
from ..exceptions import ShardStoreError
from . import terms

CONNECT_TIMEOUT = 2  # seconds (MySQL counts whole seconds)
#: How long a replica pointed at its source is given to connect and run.
REPLICATE_SECONDS = 10.0
#: How long a fence statement (``read_only``, killing sessions) may wait for locks.
FENCE_SECONDS = 5
#: Client errors that mean "nothing answers there" (refused, timed out, connection lost),
#: as opposed to a server that answers with a refusal (too many connections, access denied,
#: host blocked): only the first can be a dead server.
NO_ANSWER = frozenset({2002, 2003, 2006, 2013})


class HostError(ShardStoreError):
    """A MySQL server refused or failed an operator's command; the message names it.
    ``errno`` is MySQL's error number, when there is one."""

    def __init__(self, message: str, errno: int = 0) -> None:
        super().__init__(message)
        self.errno = errno


@dataclass(frozen=True)
class ReplicaStatus:
    """A replica's view of its replication (``SHOW SLAVE STATUS``)."""

    source: str  # host:port
    io_running: bool
    sql_running: bool
    lag_seconds: int | None  # None while the SQL thread is stopped
    last_error: str
    #: The I/O thread: "Yes" (connected), "Connecting" (running, its source lost) or "No".
    io_state: str = "Yes"
    #: The GTID position of what the I/O thread has received (``Gtid_IO_Pos``).
    received: str = ""
    #: The I/O thread's last error number (it stays after the thread is stopped).
    io_errno: int = 0

    @property
    def lost_source(self) -> bool:
        """Whether the I/O thread lost its source: still trying to reach it, or stopped
        after it lost it (by an emergency failover, say), not stopped while connected or
        on a replication error."""
        return self.io_state == "Connecting" or (
            self.io_state == "No" and self.io_errno in NO_ANSWER
        )

    @property
    def healthy(self) -> bool:
        return self.io_running and self.sql_running and not self.last_error


@dataclass(frozen=True)
class SemiSync:
    """A master's semi-synchronous replication: whether its commits wait for a replica's
    acknowledgement, whether they stop waiting when no replica is connected (armed, not
    kept), and how many replicas acknowledge now."""

    enabled: bool
    falls_back: bool
    replicas: int
    #: How long a commit waits for an acknowledgement (the range's ``Durability``).
    timeout_ms: int = NO_FALLBACK_MS
    #: Whether it went asynchronous after that wait: no replica acknowledged in time.
    degraded: bool = False

    @property
    def kept(self) -> bool:
        """Every commit waits for a connected replica's acknowledgement."""
        return self.enabled and not self.falls_back and self.replicas > 0


@dataclass(frozen=True)
class SnapshotPosition:
    """Where a consistent snapshot reads, in the master's binary log and as GTIDs."""

    file: str
    offset: int
    gtid: str


def admin(credentials: str | None, replication: str | None = None) -> Callable[[str], MySQLHost]:
    """Operators' connections as ``user:password`` (the site's own user has no privilege
    that ``read_only`` lets through, so it cannot fail a host over; None: the credentials
    in each host's address), which point replicas at their source as ``replication``
    (``user:password`` of an account with REPLICATION SLAVE only)."""
    user, _, password = (credentials or "").partition(":")

    def connect(address: str) -> MySQLHost:
        if not credentials:
            return MySQLHost(address, replication=replication)
        return MySQLHost(address, user=user, password=password, replication=replication)

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
        replication: str | None = None,
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
        #: ``user:password`` of the account replicas log in to this server's source as.
        self.replication = replication
        try:
            self._connection = MySQLdb.connect(
                host=self.host, port=self.port, user=self.user, password=self.password,
                connect_timeout=CONNECT_TIMEOUT, read_timeout=max(1, int(timeout)),
                autocommit=True, cursorclass=MySQLdb.cursors.DictCursor,
            )  # fmt: skip
        except MySQLdb.Error as exc:
            errno = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
            raise HostError(f"{self.host}:{self.port} cannot be reached: {exc}", errno) from None
        try:
            terms.claim(self)
        except BaseException:
            self.close()
            raise

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
            errno = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
            raise HostError(f"{self.host}:{self.port}: {sql.split()[0]}: {exc}", errno) from None
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
        rows = self.query("SELECT schema_name AS name FROM information_schema.schemata")
        return {str(r["name"]) for r in rows}

    def read_only(self) -> bool:
        return bool(self.value("SELECT @@global.read_only"))

    def set_read_only(self, on: bool) -> None:
        """Set or clear ``read_only``; setting it waits ``FENCE_SECONDS`` at most for commits."""
        self.query(
            f"SET STATEMENT max_statement_time = {FENCE_SECONDS}, lock_wait_timeout = "
            f"{FENCE_SECONDS} FOR SET GLOBAL read_only = {1 if on else 0}"
        )

    def server_id(self) -> int:
        return int(self.value("SELECT @@global.server_id"))

    def kill_client_sessions(self) -> int:
        """End every client's session but this one, privileged ones included (``read_only``
        does not stop a SUPER session, and a transaction open across it could commit
        later); replication's own threads stay. How many were ended."""
        rows = self.query(
            "SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID()"
            " AND user NOT IN ('system user', 'event_scheduler')"
            " AND command NOT IN ('Binlog Dump', 'Daemon', 'Slave_IO', 'Slave_SQL')"
        )
        return sum(self.end_session(int(row["id"])) for row in rows)

    def end_session(self, session: int) -> bool:
        """``KILL`` a session; False if it had ended by itself meanwhile."""
        try:
            self.query(f"KILL {session}")
        except HostError as exc:
            if exc.errno != _UNKNOWN_THREAD:
                raise
            return False
        return True

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
            str(row.get("Slave_IO_Running") or "No"),
            str(row.get("Gtid_IO_Pos") or ""),
            int(row.get("Last_IO_Errno") or 0),
        )

    # -- replication --------------------------------------------------------------

    def stop_receiving(self) -> None:
        """Stop the I/O thread: nothing more arrives (the SQL thread applies what did)."""
        self.query("STOP SLAVE IO_THREAD")

    def apply_received(self, timeout: float) -> str:
        """Wait until the SQL thread has applied everything the I/O thread received (which
        must be stopped: nothing more comes). Returns what was received; raises if the SQL
        thread stopped on an error or did not finish in time."""
        status = self.replica_status()
        if status is None:
            raise HostError(f"{self.host}:{self.port} replicates from no one")
        if status.io_state != "No":
            raise HostError(f"{self.host}:{self.port}: stop its I/O thread first")
        if not status.sql_running:
            raise HostError(
                f"{self.host}:{self.port}: its SQL thread is stopped:"
                f" {status.last_error or 'stopped by hand'}"
            )
        if not self.wait_for(status.received, timeout):
            raise HostError(
                f"{self.host}:{self.port} has not applied {status.received} in {timeout:g}s"
            )
        return status.received

    def wait_for(self, gtid_pos: str, timeout: float) -> bool:
        """Wait until this replica has applied ``gtid_pos``; whether it did in time."""
        if not gtid_pos:
            return True
        result = self.value("SELECT MASTER_GTID_WAIT(%s, %s)", (gtid_pos, timeout))
        return bool(result == 0)

    def replicate_from(self, source: MySQLHost, *, position: str = "current_pos", acknowledging: bool = True) -> None:  # fmt: skip
        """Follow ``source`` from where this server's GTID position stands, logged in as the
        replication account (REPLICATION SLAVE only: ``master.info`` keeps its password);
        returns once both replication threads run. ``position="slave_pos"``: from
        ``gtid_slave_pos`` instead (a copy loaded from a dump sets it). A server the map
        names no replica (a backup's check) follows without ``acknowledging`` commits."""
        if position not in ("current_pos", "slave_pos"):
            raise ValueError(f"MASTER_USE_GTID={position}?")
        if not self.replication:
            raise HostError(
                "no replication account: set PINBOARD_MYSQL_REPLICATION (user:password)"
            )
        user, _, password = self.replication.partition(":")
        self.query("STOP SLAVE")
        self.query(f"SET GLOBAL rpl_semi_sync_slave_enabled = {int(acknowledging)}")
        self.query(
            "CHANGE MASTER TO MASTER_HOST=%s, MASTER_PORT=%s, MASTER_USER=%s,"
            f" MASTER_PASSWORD=%s, MASTER_USE_GTID={position}, MASTER_CONNECT_RETRY=1",
            (source.host, source.port, user, password),
        )
        self.query("START SLAVE")
        deadline = time.monotonic() + REPLICATE_SECONDS
        while not ((status := self.replica_status()) and status.io_running and status.sql_running):
            if time.monotonic() > deadline:
                state = f"I/O {status.io_state}, SQL running: {status.sql_running}" if status else ""  # fmt: skip
                raise HostError(
                    f"{self.host}:{self.port} does not replicate from {source.host}:{source.port}"
                    f" after {REPLICATE_SECONDS:g}s ({state}; {status.last_error if status else ''})"
                )
            time.sleep(0.05)

    def set_semi_sync(self, on: bool, durability: Durability = STRICT) -> None:
        """Whether commits wait for a replica's acknowledgement, as long as ``durability``
        says: on a master with a replica only (a replica that waited would hold back its
        applier, and with no replica every commit would wait)."""
        if on:
            self._semi_sync(durability, wait_no_slave=True)
        else:
            self.query("SET GLOBAL rpl_semi_sync_master_enabled = 0")

    def arm_semi_sync(self, durability: Durability = STRICT) -> None:
        """Semi-sync for a master with no replica yet (just promoted, or split off): it
        commits alone while no replica is connected, then waits for the first that
        connects. ``set_semi_sync(True)`` ends that fallback (``pairs`` reports it)."""
        self._semi_sync(durability, wait_no_slave=False)

    def _semi_sync(self, durability: Durability, *, wait_no_slave: bool) -> None:
        self.query(f"SET GLOBAL rpl_semi_sync_master_timeout = {durability.timeout_ms}")
        self.query(f"SET GLOBAL rpl_semi_sync_master_wait_no_slave = {int(wait_no_slave)}")
        self.query("SET GLOBAL rpl_semi_sync_master_enabled = 1")

    def semi_sync(self) -> SemiSync:
        """This server's semi-synchronous replication, as a master."""
        status = {
            str(r["Variable_name"]).lower(): str(r["Value"])
            for r in self.query("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_%'")
        }
        (row,) = self.query(
            "SELECT @@global.rpl_semi_sync_master_enabled AS enabled, @@global.rpl_semi_sync_"
            "master_wait_no_slave AS waits, @@global.rpl_semi_sync_master_timeout AS timeout"
        )
        enabled, falls_back = bool(row["enabled"]), not row["waits"]
        degraded = enabled and not falls_back and status.get("rpl_semi_sync_master_status") == "OFF"
        replicas = int(status.get("rpl_semi_sync_master_clients", 0))
        return SemiSync(enabled, falls_back, replicas, int(row["timeout"]), degraded)

    def acknowledges(self) -> bool:
        """Whether, as a replica, it is connected as one that acknowledges (semi-sync)."""
        (row,) = self.query("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_slave_status'")
        return str(row["Value"]).upper() == "ON"

    def stop_replicating(self) -> None:
        """Stop following anyone, and forget the source (a promoted replica)."""
        self.query("STOP SLAVE")
        self.query("RESET SLAVE ALL")


def gtid_domains(position: str) -> dict[int, tuple[int, int]]:
    """A GTID position by replication domain: ``0-1-120,1-2-7`` -> ``{0: (1, 120), 1: (2,
    7)}`` (domain: (server id, sequence number)). In strict mode a domain's sequence
    numbers only grow, whoever writes them, so two positions compare domain by domain."""
    domains = {}
    for gtid in filter(None, (part.strip() for part in position.split(","))):
        domain, server, sequence = (int(n) for n in gtid.split("-"))
        domains[domain] = (server, sequence)
    return domains


_UNKNOWN_THREAD = 1094
