"""The contract every backend keeps: one physical host, sessions on its shards.

A backend serves the logical shards the topology puts on one host. SQL is
written once, for both backends, with ``{db}`` where the shard's database goes
and ``%s`` placeholders; each backend renders it for its driver. Backends
differ only in how they connect, name databases, lock rows and report errors.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..exceptions import ShardStoreError, ShardUnavailable
from .pool import ConnectionPool, discard

Params = Sequence[Any]


class UniqueViolation(ShardStoreError):
    """A write hit a unique key (internal: callers translate it, e.g. into DuplicateKey)."""


@dataclass(frozen=True)
class Dialect:
    """The few SQL fragments where MySQL and SQLite differ."""

    insert_ignore: str  # "INSERT IGNORE" / "INSERT OR IGNORE"
    for_update: str  # row lock on a read inside a write transaction
    begin: str  # start a write transaction
    add_to_count: str  # upsert into mapping_counts: (from_id, relation, delta)


class Session:
    """A connection checked out for one shard: run statements, count round trips.

    Driver errors are translated where they happen, so code inside a session
    can catch ``UniqueViolation``; a connection that failed is marked broken
    and never returned to the pool.
    """

    __slots__ = ("_backend", "_cursor", "broken", "shard_id")

    def __init__(self, cursor: Any, backend: Backend, shard_id: int) -> None:
        self._cursor = cursor
        self._backend = backend
        self.shard_id = shard_id
        self.broken = False

    @property
    def dialect(self) -> Dialect:
        return self._backend.dialect

    def query(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Run a SELECT and return all rows."""
        self._run(self._cursor.execute, sql, params)
        return list(self._cursor.fetchall())

    def execute(self, sql: str, params: Params = ()) -> int:
        """Run a write and return the number of rows it changed."""
        self._run(self._cursor.execute, sql, params)
        return int(self._cursor.rowcount)

    def insert(self, sql: str, params: Params = ()) -> int:
        """Run an INSERT into an auto-increment table and return the new row's id."""
        self._run(self._cursor.execute, sql, params)
        return int(self._cursor.lastrowid)

    def executemany(self, sql: str, rows: Sequence[Params]) -> int:
        """Run one statement for many rows (one round trip where the driver batches)."""
        self._run(self._cursor.executemany, sql, rows)
        return int(self._cursor.rowcount)

    def _run(self, method: Callable[..., Any], sql: str, params: Any) -> None:
        backend = self._backend
        rendered = backend.render(sql, self.shard_id)
        backend.on_query(rendered)
        try:
            method(rendered, params)
        except Exception as exc:
            translated = backend.translate(exc, self.shard_id)
            if translated is None:
                raise
            self.broken = not isinstance(translated, UniqueViolation)
            raise translated from exc


class Backend(ABC):
    """One physical host. Subclasses: ``mysql.MySQLBackend``, ``sqlite.SQLiteBackend``."""

    dialect: Dialect

    def __init__(
        self, host: str, address: str, *, on_query: Callable[[str], None], max_idle: int
    ) -> None:
        self.host = host
        self.address = address
        self.on_query = on_query
        self._pool = ConnectionPool(self._connect, max_idle=max_idle)

    # -- what each backend provides -----------------------------------------

    @abstractmethod
    def _connect(self, key: Any) -> Any:
        """Open a new DB-API connection for a pool key (autocommit on)."""

    @abstractmethod
    def _pool_key(self, shard_id: int) -> Any:
        """Which pool a shard's connections come from (the host, or the shard's file)."""

    @abstractmethod
    def database(self, shard_id: int) -> str:
        """The name that ``{db}`` renders to for a shard."""

    @abstractmethod
    def translate(self, exc: Exception, shard_id: int) -> ShardStoreError | None:
        """The shardstore error for a driver error, or None to let it through (a bug)."""

    @abstractmethod
    def _render_params(self, sql: str) -> str:
        """Convert ``%s`` placeholders to the driver's style."""

    @abstractmethod
    def create_shard(self, shard_id: int, tables: TableSet) -> None:
        """Create the shard's database and every table if missing (idempotent)."""

    # -- sessions -----------------------------------------------------------

    @contextmanager
    def session(self, shard_id: int, *, write: bool = False) -> Iterator[Session]:
        """A connection to ``shard_id``; with ``write=True`` one transaction, committed on exit."""
        key = self._pool_key(shard_id)
        try:
            connection = self._pool.acquire(key)
        except Exception as exc:
            raise (self.translate(exc, shard_id) or exc) from exc
        session = Session(connection.cursor(), self, shard_id)
        try:
            if write:
                session.execute(self.dialect.begin)
            yield session
            if write:
                self.on_query("COMMIT")
                connection.commit()
        except BaseException as exc:
            if write and not session.broken:
                try:
                    connection.rollback()
                except Exception:  # noqa: BLE001 - the connection is lost too
                    session.broken = True
            if isinstance(exc, Exception) and not isinstance(exc, ShardStoreError):
                translated = self.translate(exc, shard_id)
                if translated is not None:  # e.g. the COMMIT itself failed
                    session.broken = True
                    raise translated from exc
            raise
        finally:
            if session.broken:
                discard(connection)
            else:
                self._pool.release(key, connection)

    def render(self, sql: str, shard_id: int) -> str:
        """``sql`` with the shard's database and the driver's placeholders filled in."""
        return self._render_params(sql.replace("{db}", self.database(shard_id)))

    def unavailable(self, shard_id: int, reason: object) -> ShardUnavailable:
        return ShardUnavailable(shard_id, self.host, str(reason))

    def close(self) -> None:
        self._pool.close()


@dataclass(frozen=True)
class TableSet:
    """The tables every shard holds, by kind (derived from the catalog)."""

    objects: Sequence[str]
    mappings: Sequence[str]
    lookups: Sequence[str]
