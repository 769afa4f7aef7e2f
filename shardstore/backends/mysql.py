"""The production backend: logical shards are databases db00000.. on MySQL hosts.

A host is ``mysql://[user[:password]@]address:port``; every shard's tables are
named in full (``db00042.pins``), so one pooled connection per thread serves
all the shards of a host without a ``USE`` round trip.
"""

from __future__ import annotations

import math
import select
from typing import Any
from urllib.parse import unquote, urlsplit

from ..exceptions import ShardReadOnly, ShardStoreError, ShardUnavailable, WriteConflict
from ..topology import database_name
from .acknowledgements import AcknowledgementWatch
from .base import Backend
from .sql import Dialect, TableSet, UniqueViolation

try:
    import MySQLdb
except ImportError:  # the embedded default does not need the MySQL client library
    MySQLdb = None

#: Seconds a statement may wait for the server's answer. Masters acknowledge a commit only
#: once a replica has it (semi-sync, no fallback): with the replica gone, a write fails
#: after this (503, nothing acknowledged) rather than holding a web thread for good.
READ_TIMEOUT = 10.0
#: Seconds the statement that ends a session given up on may take (connect, then KILL).
KILL_TIMEOUT = 1
# Server errors that mean "this shard's database or tables are not there".
_MISSING_SCHEMA = {1049, 1146}
_DUPLICATE_ENTRY = 1062
# "running with the --read-only option": a demoted or fenced master refused a write; or
# "INSERT command denied" on a shard's table: a move took this host's writes on the shard
# away from the site's account (shardstore/control/grant_fence.py); "SELECT command
# denied" (or access denied to the database): its reads too, on a copy nothing feeds.
_READ_ONLY = 1290
_TABLE_ACCESS_DENIED, _DATABASE_ACCESS_DENIED = 1142, 1044
# Lock conflicts: the transaction was rolled back and may simply be run again.
_DEADLOCK, _LOCK_WAIT_TIMEOUT = 1213, 1205
# Client errors for a connection that is gone; 2006 is raised before sending.
_SERVER_GONE, _LOST_DURING_QUERY, _LOST_ON_WRITE = 2006, 2013, 2055


class MySQLBackend(Backend):
    spans_shards = True
    dialect = Dialect(
        insert_ignore="INSERT IGNORE",
        max_union=1000,
        for_update=" FOR UPDATE",
        begin="BEGIN",
        add_to_count=(
            "INSERT INTO {db}.mapping_counts (from_id, relation, n) VALUES (%s, %s, %s)"
            " ON DUPLICATE KEY UPDATE n = n + VALUES(n)"
        ),
        count_object="JSON_OBJECTAGG(relation, n)",
        several_statements=True,
    )

    def __init__(
        self,
        host: str,
        address: str,
        *,
        login: str | None = None,
        connect_timeout: float = 3.0,
        read_timeout: float = READ_TIMEOUT,
        **options: Any,
    ) -> None:
        if MySQLdb is None:
            raise ImportError(
                "the mysql backend needs mysqlclient: pip install -r requirements-mysql.txt"
            )
        self._read_timeout = max(1, int(read_timeout))  # whole seconds, as MySQL counts them
        parts = urlsplit(address)
        user, password = parts.username, parts.password
        if user is None and login:
            user, _, password = login.partition(":")
        self._params = {
            "host": parts.hostname or "127.0.0.1",
            "port": parts.port or 3306,
            "user": unquote(user or "root"),
            "password": unquote(password or ""),
            "connect_timeout": max(1, int(connect_timeout)),
            "read_timeout": self._read_timeout,
            "charset": "utf8mb4",
            "autocommit": True,
        }
        options.setdefault("max_idle", 32)
        super().__init__(host, address, **options)
        self.acknowledgements = AcknowledgementWatch(trying=self._read_timeout + KILL_TIMEOUT)

    def database(self, shard_id: int) -> str:
        return database_name(shard_id)

    def _pool_key(self, shard_id: int) -> str:
        return self.host

    def _connect(self, key: Any) -> Any:
        return MySQLdb.connect(**self._params)

    def probe(self, timeout: float) -> str | None:
        """A connection of its own (whole seconds, as MySQL counts them) and ``SELECT 1``."""
        seconds = max(1, math.ceil(timeout))
        limits = {"connect_timeout": seconds, "read_timeout": seconds, "write_timeout": seconds}
        try:
            connection = MySQLdb.connect(**{**self._params, **limits})
            try:
                cursor = connection.cursor()
                cursor.execute("SELECT 1")
                cursor.fetchall()
            finally:
                connection.close()
        except MySQLdb.Error as exc:  # the code only: the message names the address
            return f"MySQL error {_code(exc) or 'without a code'}"
        return None

    def _render_params(self, sql: str) -> str:
        return sql

    def translate(self, exc: Exception, shard_id: int) -> ShardStoreError | None:
        if isinstance(exc, ShardStoreError):
            return exc
        code = _code(exc)
        if isinstance(exc, MySQLdb.IntegrityError) and code == _DUPLICATE_ENTRY:
            return UniqueViolation(str(exc))
        if code in (_DEADLOCK, _LOCK_WAIT_TIMEOUT):
            return WriteConflict(f"shard {shard_id}: {exc.args[1]}")
        if code == _READ_ONLY:
            return ShardReadOnly(shard_id, self.host, "the host is read_only (demoted or fenced)")
        if code == _DATABASE_ACCESS_DENIED or (
            code == _TABLE_ACCESS_DENIED and str(exc.args[1]).startswith("SELECT")
        ):
            return ShardReadOnly(shard_id, self.host, "the host no longer serves it (moved)")
        if code == _TABLE_ACCESS_DENIED:
            return ShardReadOnly(
                shard_id, self.host, "the host no longer takes writes to it (moved)"
            )
        if code in _MISSING_SCHEMA:
            return self.unavailable(shard_id, f"{exc.args[1]} (run `shardstore init`)")
        if isinstance(exc, (MySQLdb.OperationalError, MySQLdb.InterfaceError)):
            return self.unavailable(shard_id, exc.args[-1] if exc.args else exc)
        return None

    def still_open(self, connection: Any) -> bool:
        # A connection the server closed has its end-of-stream waiting to be read;
        # a healthy idle one has nothing. One poll(), no round trip.
        poller = select.poll()
        poller.register(connection.fileno(), select.POLLIN)
        return not poller.poll(0)

    def is_disconnect(self, exc: Exception) -> bool:
        return isinstance(exc, MySQLdb.OperationalError) and _code(exc) in (
            _SERVER_GONE, _LOST_DURING_QUERY, _LOST_ON_WRITE,
        )  # fmt: skip

    def never_sent(self, exc: Exception) -> bool:
        return _code(exc) == _SERVER_GONE

    def abandon(self, connection: Any, exc: Exception, seconds: float) -> None:
        """A statement the read timeout gave up on still runs on the server: a commit
        waiting for a replica's acknowledgement, holding its row locks and a connection
        until one comes. Ended there too, on a connection of its own, which settles the
        write's outcome: committed or rolled back, never pending (best effort: a server that
        cannot be reached is the failover's to fence)."""
        if _code(exc) != _LOST_DURING_QUERY or seconds < self._read_timeout:
            return
        try:
            thread = int(connection.thread_id())
            killer = self._short_connection()
            try:
                cursor = killer.cursor()
                cursor.execute("SELECT state FROM information_schema.processlist WHERE id = %s", (thread,))  # fmt: skip
                if "semi-sync" in str((cursor.fetchone() or ("",))[0] or "").lower():
                    self.acknowledgements.given_up()  # its writes refused until a replica is back
                cursor.execute(f"KILL {thread}")
            finally:
                killer.close()
        except MySQLdb.Error:
            pass  # unreachable, or the session had already ended (unknown thread)

    def admit_write(self, shard_id: int) -> None:
        if self.acknowledgements.refuses():
            raise ShardUnavailable(
                shard_id, self.host,
                "its commits wait for an acknowledgement no replica sends: writes refused for now",
            )  # fmt: skip

    def committed(self) -> None:
        self.acknowledgements.committed()

    def _short_connection(self) -> Any:
        """A connection of its own that waits at most ``KILL_TIMEOUT`` s for anything."""
        return MySQLdb.connect(**{**self._params, "connect_timeout": KILL_TIMEOUT, "read_timeout": KILL_TIMEOUT})  # fmt: skip

    def create_shard(self, shard_id: int, tables: TableSet) -> None:
        db = self.database(shard_id)
        try:
            connection = self._connect(self.host)
        except Exception as exc:
            raise (self.translate(exc, shard_id) or exc) from exc
        try:
            cursor = connection.cursor()
            cursor.execute(f"CREATE DATABASE IF NOT EXISTS {db} CHARACTER SET utf8mb4")
            for statement in _statements(tables):
                cursor.execute(statement.replace("{db}", db))
        except Exception as exc:
            raise (self.translate(exc, shard_id) or exc) from exc
        finally:
            connection.close()


def _code(exc: Exception) -> int | None:
    return exc.args[0] if exc.args and isinstance(exc.args[0], int) else None


def _statements(tables: TableSet) -> list[str]:
    engine = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
    statements = []
    for table in tables.objects:
        statements.append(
            f"CREATE TABLE IF NOT EXISTS {{db}}.{table} ("
            " local_id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,"
            " data JSON NOT NULL,"
            " ts TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP)" + engine
        )
    for table in tables.mappings:
        # The pair is the primary key (one row per pair, contains/filter are key
        # lookups); pages read the (from_id, sequence, to_id) index.
        statements.append(
            f"CREATE TABLE IF NOT EXISTS {{db}}.{table} ("
            " from_id BIGINT UNSIGNED NOT NULL, to_id BIGINT UNSIGNED NOT NULL,"
            " sequence BIGINT NOT NULL,"
            " PRIMARY KEY (from_id, to_id), KEY by_sequence (from_id, sequence, to_id))" + engine
        )
    statements.append(
        "CREATE TABLE IF NOT EXISTS {db}.mapping_counts ("
        " from_id BIGINT UNSIGNED NOT NULL, relation VARCHAR(64) CHARACTER SET ascii NOT NULL,"
        " n BIGINT NOT NULL, PRIMARY KEY (from_id, relation))" + engine
    )
    for table in tables.lookups:
        statements.append(
            f"CREATE TABLE IF NOT EXISTS {{db}}.{table} ("
            " lookup_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,"
            " object_id BIGINT UNSIGNED NOT NULL)" + engine
        )
    # Idempotency keys (shardstore/idempotency.py): by (sender, key), the claims on the
    # sender's shard and the keys' objects on theirs; the expiry job reads by_expiry.
    key = (
        " sender_id BIGINT UNSIGNED NOT NULL,"
        " idem_key VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,"
        " fingerprint VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,"
    )
    for table, columns in (("idempotency_claims", ""), ("idempotency_keys", " object_id BIGINT UNSIGNED NOT NULL,")):  # fmt: skip
        statements.append(
            f"CREATE TABLE IF NOT EXISTS {{db}}.{table} (" + key + columns
            + " expires_at BIGINT NOT NULL, PRIMARY KEY (sender_id, idem_key),"
            " KEY by_expiry (expires_at))" + engine
        )  # fmt: skip
    return statements
