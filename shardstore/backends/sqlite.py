"""The embedded backend: each logical shard is one SQLite file in the host's directory.

A "host" is a directory (``sqlite:///var/shards/db1``); shard 42 is the file
``db00042.sqlite3`` in it. It keeps production's semantics (one row per
mapping pair, unique lookup keys, row-locking read-modify-write through
``BEGIN IMMEDIATE``) so code that passes here passes on MySQL.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from ..exceptions import ShardStoreError, WriteConflict
from ..topology import database_name
from .base import Backend
from .sql import Dialect, TableSet, UniqueViolation

# OperationalError messages that mean the shard's file cannot be used (others are bugs).
_UNAVAILABLE = ("unable to open", "disk I/O", "no such table", "readonly", "malformed")


class SQLiteBackend(Backend):
    dialect = Dialect(
        insert_ignore="INSERT OR IGNORE",
        max_union=500,  # SQLITE_MAX_COMPOUND_SELECT
        for_update="",  # BEGIN IMMEDIATE already holds the write lock
        begin="BEGIN IMMEDIATE",
        add_to_count=(
            "INSERT INTO {db}.mapping_counts (from_id, relation, n) VALUES (%s, %s, %s)"
            " ON CONFLICT (from_id, relation) DO UPDATE SET n = n + excluded.n"
        ),
        count_object="json_group_object(relation, n)",
        several_statements=False,
    )

    def __init__(self, host: str, address: str, **options: Any) -> None:
        options.setdefault("max_idle", 256)  # each open WAL database holds three files
        # No bulkhead: a file of this machine does not hang as a remote host does, and its
        # writers queue on the file's lock, which a bound would turn into 503s.
        options.pop("max_sessions", None)
        self.directory = Path(address.removeprefix("sqlite://"))
        super().__init__(host, address, **options)

    def path(self, shard_id: int) -> Path:
        return self.directory / f"{database_name(shard_id)}.sqlite3"

    def database(self, shard_id: int) -> str:
        return "main"

    def _pool_key(self, shard_id: int) -> int:
        return shard_id

    def _connect(self, shard_id: int, *, create: bool = False) -> sqlite3.Connection:
        path = self.path(shard_id)
        if not create and not path.exists():
            raise self.unavailable(shard_id, f"{path.name} does not exist (run `shardstore init`)")
        mode = "rwc" if create else "rw"
        connection = sqlite3.connect(
            f"file:{path}?mode={mode}",
            uri=True,
            isolation_level=None,  # autocommit; write sessions BEGIN explicitly
            check_same_thread=False,  # the pool hands a connection to one thread at a time
            timeout=10.0,
        )
        connection.execute("PRAGMA synchronous=NORMAL")
        return connection

    def probe(self, timeout: float) -> str | None:
        """Reachable while its directory is there (each shard's file is opened on use)."""
        return None if self.directory.is_dir() else "its directory is not there"

    def _render_params(self, sql: str) -> str:
        return sql.replace("%s", "?")

    def translate(self, exc: Exception, shard_id: int) -> ShardStoreError | None:
        if isinstance(exc, ShardStoreError):
            return exc
        if isinstance(exc, sqlite3.IntegrityError) and "UNIQUE" in str(exc):
            return UniqueViolation(str(exc))
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            return WriteConflict(f"shard {shard_id}: {exc}")
        if isinstance(exc, sqlite3.OperationalError) and any(
            sign in str(exc) for sign in _UNAVAILABLE
        ):
            return self.unavailable(shard_id, exc)
        return None

    def create_shard(self, shard_id: int, tables: TableSet) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            connection = self._connect(shard_id, create=True)
        except (OSError, sqlite3.Error) as exc:
            raise self.unavailable(shard_id, exc) from exc
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.executescript(";\n".join(_statements(tables)) + ";")
        finally:
            connection.close()


def _statements(tables: TableSet) -> list[str]:
    statements = []
    for table in tables.objects:
        statements.append(
            f"CREATE TABLE IF NOT EXISTS {table} ("
            " local_id INTEGER PRIMARY KEY AUTOINCREMENT,"
            " data TEXT NOT NULL CHECK (json_valid(data)),"
            " ts TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
        )
    for table in tables.mappings:
        statements.append(
            f"CREATE TABLE IF NOT EXISTS {table} ("
            " from_id INTEGER NOT NULL, to_id INTEGER NOT NULL, sequence INTEGER NOT NULL,"
            " PRIMARY KEY (from_id, to_id)) WITHOUT ROWID"
        )
        statements.append(
            f"CREATE INDEX IF NOT EXISTS {table}_by_sequence ON {table} (from_id, sequence, to_id)"
        )
    statements.append(
        "CREATE TABLE IF NOT EXISTS mapping_counts ("
        " from_id INTEGER NOT NULL, relation TEXT NOT NULL, n INTEGER NOT NULL,"
        " PRIMARY KEY (from_id, relation)) WITHOUT ROWID"
    )
    for table in tables.lookups:
        statements.append(
            f"CREATE TABLE IF NOT EXISTS {table} ("
            " lookup_key TEXT NOT NULL PRIMARY KEY, object_id INTEGER NOT NULL) WITHOUT ROWID"
        )
    # Idempotency keys (shardstore/idempotency.py), as on MySQL.
    for table, columns in (("idempotency_claims", ""), ("idempotency_keys", " object_id INTEGER NOT NULL,")):  # fmt: skip
        statements.append(
            f"CREATE TABLE IF NOT EXISTS {table} ("
            " sender_id INTEGER NOT NULL, idem_key TEXT NOT NULL, fingerprint TEXT NOT NULL,"
            f"{columns} expires_at INTEGER NOT NULL, PRIMARY KEY (sender_id, idem_key)) WITHOUT ROWID"
        )
        statements.append(f"CREATE INDEX IF NOT EXISTS {table}_by_expiry ON {table} (expires_at)")
    return statements
