"""The contract every backend keeps: one physical host, sessions on its shards.

A backend serves the logical shards the topology puts on one host. SQL is
written once, for both backends, with ``{db}`` where the shard's database goes
and ``%s`` placeholders; each backend renders it for its driver. Backends
differ only in how they connect, name databases, lock rows and report errors.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from ..exceptions import ShardMoving, ShardStoreError, ShardUnavailable
from .bulkhead import Bulkhead
from .pool import ConnectionPool, discard
from .sql import Dialect, TableSet

if TYPE_CHECKING:
    from ..fence import WriteFence

Params = Sequence[Any]
#: Told of every statement sent: its shard, its SQL as sent, and the seconds it took.
OnQuery = Callable[[int, str, float], None]


class Session:
    """A connection checked out for one shard: run statements, count round trips.

    Use it as a context manager (``with backend.session(shard) as s``): entering
    takes a pooled connection (and begins a transaction for a write session),
    leaving commits or rolls back and gives the connection back. Driver errors
    are translated where they happen, so code inside can catch
    ``UniqueViolation``; a connection that failed is never pooled again.
    With a ``fence``, a write session is admitted by it before it begins, and
    a read session before its first statement that is not a SELECT. A write the
    fence turns away because its shard is moving waits for the move (``fence.hold``)
    if nothing has been sent yet, then goes on to the backend ``reroute(shard)`` names.
    """

    __slots__ = (
        "_backend", "_connection", "_cursor", "_fence", "_key", "_may_retry", "_reroute",
        "_sent", "_slot", "_ticket", "broken", "shard_id", "write",
    )  # fmt: skip

    def __init__(
        self,
        backend: Backend,
        shard_id: int,
        write: bool,
        fence: WriteFence | None = None,
        reroute: Callable[[int], Backend] | None = None,
    ) -> None:
        self._backend = backend
        self.shard_id = shard_id
        self.write = write
        self.broken = False
        self._fence = fence
        self._reroute = reroute
        self._ticket: int | None = None
        self._connection: Any = None
        self._sent = False
        self._slot: Bulkhead | None = None  # the host's bulkhead this session holds a place in

    def __enter__(self) -> Session:
        if self.write:
            self._backend.admit_write(self.shard_id)
            self._admit()
        try:
            self._acquire()
        except BaseException:
            self._let_go()
            self._end_write()
            raise
        if self.write:
            try:
                self.execute(self._backend.dialect.begin)
            except BaseException:
                self._release()
                raise
        return self

    def _acquire(self) -> None:
        backend = self._backend
        self._key = backend._pool_key(self.shard_id)
        if backend.bulkhead is not None:
            backend.bulkhead.enter(self.shard_id, write=self.write)
            self._slot = backend.bulkhead
        try:
            self._connection, reused = backend._pool.acquire(self._key)
        except Exception as exc:
            raise (backend.translate(exc, self.shard_id) or exc) from exc
        if reused and not backend.still_open(self._connection):
            self._reconnect()  # closed by the server while idle (restart, wait_timeout)
            reused = False
        self._cursor = self._connection.cursor()
        # A pooled connection may also die between that check and its first use:
        # that first statement may be retried once on a new connection.
        self._may_retry = reused

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        backend = self._backend
        try:
            if exc is None:
                if self.write:
                    started = time.perf_counter()
                    try:
                        self._connection.commit()
                        backend.committed()
                    except Exception as commit_error:
                        self.broken = True
                        backend.abandon(
                            self._connection, commit_error, time.perf_counter() - started
                        )
                        translated = backend.translate(commit_error, self.shard_id)
                        raise (translated or commit_error) from commit_error
                    finally:
                        backend.on_query(self.shard_id, "COMMIT", time.perf_counter() - started)
            elif self.write and not self.broken:
                try:
                    self._connection.rollback()
                except Exception:  # noqa: BLE001 - the connection is lost too
                    self.broken = True
        finally:
            self._release()

    def _reconnect(self) -> None:
        """Swap a dead pooled connection for a new one; its idle siblings likely died too."""
        backend = self._backend
        discard(self._connection)
        backend._pool.clear(self._key)
        try:
            self._connection = backend._connect(self._key)
        except Exception as exc:
            self.broken = True
            raise (backend.translate(exc, self.shard_id) or exc) from exc
        if hasattr(self, "_cursor"):
            self._cursor = self._connection.cursor()

    def _release(self) -> None:
        self._end_write()
        self._let_go()
        if self._connection is None:  # a move found no connection on the new host
            return
        if self.broken:
            discard(self._connection)
        else:
            self._backend._pool.release(self._key, self._connection)

    def _let_go(self) -> None:
        if self._slot is not None:
            self._slot.leave()
            self._slot = None

    def _admit(self) -> None:
        fence = self._fence
        if fence is None or self._ticket is not None:
            return
        try:
            self._ticket = fence.admit(self.shard_id, self._backend.host)
        except ShardMoving:
            if self._sent or self._reroute is None or not fence.hold(self.shard_id):
                raise
            self._move_to(self._reroute(self.shard_id))
            self._ticket = fence.admit(self.shard_id, self._backend.host)

    def _move_to(self, backend: Backend) -> None:
        """Go on on ``backend``: a held write, sent where the shard lives now."""
        connected = self._connection is not None
        if connected:
            self._backend._pool.release(self._key, self._connection)
            self._connection = None
            self._let_go()
        self._backend = backend
        if connected:
            self._acquire()

    def _end_write(self) -> None:
        if self._ticket is not None:
            assert self._fence is not None
            self._fence.done(self._ticket)
            self._ticket = None

    @property
    def dialect(self) -> Dialect:
        return self._backend.dialect

    def query(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Run a SELECT and return all rows."""
        self._run("execute", sql, params)
        return list(self._cursor.fetchall())

    def query_each(
        self, statements: Sequence[tuple[int, str, Params]]
    ) -> list[list[tuple[Any, ...]]]:
        """The rows of each ``(shard, SELECT, params)``, ``{db}`` naming that shard's
        database: one round trip for them all where the driver sends several statements at
        once (MySQL), else one each."""
        database = self._backend.database
        rendered = [
            (sql.replace("{db}", database(shard)), params) for shard, sql, params in statements
        ]
        if len(rendered) == 1 or not self.dialect.several_statements:
            return [self.query(sql, params) for sql, params in rendered]
        self._run(
            "execute", ";\n".join(sql for sql, _ in rendered), [p for _, ps in rendered for p in ps]
        )
        try:
            found = [list(self._cursor.fetchall())]
            while self._cursor.nextset():  # a later statement's error is raised here
                found.append(list(self._cursor.fetchall()))
        except Exception as exc:
            error = self._translate(exc)
            self.broken = True  # results may be left unread on it: never reuse it
            raise error from exc
        return found

    def execute(self, sql: str, params: Params = ()) -> int:
        """Run a write and return the number of rows it changed."""
        self._run("execute", sql, params)
        return int(self._cursor.rowcount)

    def insert(self, sql: str, params: Params = ()) -> int:
        """Run an INSERT into an auto-increment table and return the new row's id."""
        self._run("execute", sql, params)
        return int(self._cursor.lastrowid)

    def executemany(self, sql: str, rows: Sequence[Params]) -> int:
        """Run one statement for many rows (one round trip where the driver batches)."""
        self._run("executemany", sql, rows)
        return int(self._cursor.rowcount)

    def _run(self, method: str, sql: str, params: Any) -> None:
        read = _is_read(sql)
        if self._ticket is None and self._fence is not None and not read:
            self._admit()
        backend = self._backend  # (the admission may have moved the session to a new host)
        committing = not (read or self.write)  # a write outside a transaction commits alone
        if committing:
            backend.admit_write(self.shard_id)
        slot = self._slot if committing else None
        with slot.writing(self.shard_id) if slot is not None else nullcontext():
            self._sent = True
            rendered = backend.render(sql, self.shard_id)
            started = time.perf_counter()
            try:
                self._send(method, rendered, params, started)
            finally:
                backend.on_query(self.shard_id, rendered, time.perf_counter() - started)
        if committing:
            backend.committed()

    def _send(self, method: str, rendered: str, params: Any, started: float) -> None:
        may_retry, self._may_retry = self._may_retry, False
        try:
            getattr(self._cursor, method)(rendered, params)
            return
        except Exception as exc:
            self._backend.abandon(self._connection, exc, time.perf_counter() - started)
            # Retry only what cannot have run twice: a read, a BEGIN, or a statement
            # the driver never sent (the connection was already known dead).
            safe = method == "execute" and (
                rendered.lstrip().upper().startswith(("SELECT", "BEGIN"))
                or self._backend.never_sent(exc)
            )
            if not (may_retry and safe and self._backend.is_disconnect(exc)):
                raise self._translate(exc) from exc
        self._reconnect()
        try:
            getattr(self._cursor, method)(rendered, params)
        except Exception as exc:
            raise self._translate(exc) from exc

    def _translate(self, exc: Exception) -> Exception:
        """The shardstore error for a driver error (or the error itself, if it is a bug)."""
        translated = self._backend.translate(exc, self.shard_id)
        if translated is None:
            return exc
        self.broken = isinstance(translated, ShardUnavailable)
        return translated


class Backend(ABC):
    """One physical host. Subclasses: ``mysql.MySQLBackend``, ``sqlite.SQLiteBackend``."""

    dialect: Dialect
    #: Whether one connection reaches every shard database of the host, so that one
    #: statement can read several shards (MySQL: databases on one server; SQLite: a file each).
    spans_shards: bool = False

    def __init__(
        self,
        host: str,
        address: str,
        *,
        on_query: OnQuery,
        max_idle: int,
        max_sessions: int | None = None,
    ) -> None:
        self.host = host
        self.address = address
        self.on_query = on_query
        self._pool = ConnectionPool(self._connect, max_idle=max_idle)
        #: At most ``max_sessions`` of this process's threads on the host at once (None: no bound).
        self.bulkhead = Bulkhead(host, max_sessions) if max_sessions else None

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

    def still_open(self, connection: Any) -> bool:
        """A cheap check (no round trip) that an idle pooled connection was not closed."""
        return True

    def is_disconnect(self, exc: Exception) -> bool:
        """Whether a driver error means the connection itself is gone."""
        return False

    def never_sent(self, exc: Exception) -> bool:
        """Whether a disconnect error is certain to have come before the statement was sent."""
        return False

    def abandon(self, connection: Any, exc: Exception, seconds: float) -> None:
        """A statement (or commit) on ``connection`` failed with ``exc`` after ``seconds``:
        if this process gave up waiting, end what the server still runs for it. SQLite
        runs in this process: nothing goes on without it."""
        return

    def admit_write(self, shard_id: int) -> None:
        """Raise ShardUnavailable if the host's writes are refused now (a master whose
        commits wait for an acknowledgement no replica sends: ``acknowledgements.py``)."""
        return

    def committed(self) -> None:
        """A write session committed on the host."""
        return

    @abstractmethod
    def _render_params(self, sql: str) -> str:
        """Convert ``%s`` placeholders to the driver's style."""

    @abstractmethod
    def create_shard(self, shard_id: int, tables: TableSet) -> None:
        """Create the shard's database and every table if missing (idempotent)."""

    @abstractmethod
    def probe(self, timeout: float) -> str | None:
        """Why the host cannot serve now, or None if it can: a cheap check, answered
        within about ``timeout`` seconds, that never waits on a request's connection. The
        reason names no address."""

    # -- sessions -----------------------------------------------------------

    def session(
        self,
        shard_id: int,
        *,
        write: bool = False,
        fence: WriteFence | None = None,
        reroute: Callable[[int], Backend] | None = None,
    ) -> Session:
        """A connection to ``shard_id``; with ``write=True`` one transaction, committed on exit.
        Writes are admitted by ``fence`` when one is given; one held by it for a move goes
        on to the backend ``reroute(shard_id)`` names."""
        return Session(self, shard_id, write, fence, reroute)

    def render(self, sql: str, shard_id: int) -> str:
        """``sql`` with the shard's database and the driver's placeholders filled in."""
        return self._render_params(sql.replace("{db}", self.database(shard_id)))

    def unavailable(self, shard_id: int, reason: object) -> ShardUnavailable:
        return ShardUnavailable(shard_id, self.host, str(reason))

    def close(self) -> None:
        self._pool.close()


def _is_read(sql: str) -> bool:
    return sql.lstrip()[:6].upper() == "SELECT"
