"""A consistent copy of a master's shard databases onto another server, taken while writes
go on, over the MySQL port (the only one open between shard hosts) as the operator's
account: each table's ``SHOW CREATE TABLE`` and its rows, read in a ``CONSISTENT
SNAPSHOT`` transaction and written on the target as multi-row ``INSERT`` statements.

Why not ``mariadb-dump``: it asks ``INFORMATION_SCHEMA`` about every table, several
statements each, and a host of the local cluster holds 59,392 tables: 1 to 2 shards a
second on a 2-core machine. This reads two statements per table and writes one per table
(and one per megabyte of rows): 16 shards a second idle, 6 under load.

Values travel as the server's own text (no conversion in Python: a ``TIMESTAMP``, a
``JSON`` document or a ``BIGINT`` goes back exactly as it was read), both sessions in UTC
and ``utf8mb4``, the target's with ``NO_AUTO_VALUE_ON_ZERO``, as ``mariadb-dump`` does.
The load runs with ``sql_log_bin=0``: the copy must not enter the target's own binary
log, or GTID strict mode would refuse the master's transactions that follow.

One snapshot, several streams, each on its interleaved slice of the databases. They read
one snapshot: the master's commits are held (``BACKUP STAGE BLOCK_COMMIT``: statements
run, only their commits wait) until every stream has opened its transaction, a fraction
of a second, at most ``HOLD_SECONDS``; every stream then reads the same binary log
position, which is checked. The snapshot's GTID position is returned: the caller sets it
once the copy succeeded, so a copy that failed half-way never says where replication
should start.

Throttled by the master's load: before each database a stream waits while the master's
``Threads_running`` is above a bound, each pause at most ``PAUSE_CAP`` seconds.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

from .mysql_hosts import CONNECT_TIMEOUT, HostError, MySQLHost, SnapshotPosition

#: The databases a shard host holds for the shards: ``db00042``, and the copies a split
#: or its revert renamed aside (``db00042_split7``, ``db00042_reverted7``).
SHARD_DATABASE = re.compile(r"^db[0-9]{5}(_[a-z]+[0-9]+)?$")
#: The longest single pause for the master's load, and the longest hold of its commits
#: while the streams open their snapshots (seconds).
PAUSE_CAP = 30.0
HOLD_SECONDS = 10.0
#: Streams a copy runs by default. Each ``CREATE TABLE`` on the target waits on several
#: fsyncs, so the streams wait on the disk far more than on the CPU: a whole host of the
#: local cluster (59,392 tables) copied in 399 s over 4 streams, 124 s over 16.
COPY_STREAMS = 16
#: The size of one ``INSERT`` on the target, and the rows read from the master at a time.
BATCH_BYTES = 1 << 20
FETCH_ROWS = 1000
#: How long a session waits for one answer before it gives up (and the copy fails).
READ_TIMEOUT = 60

Row = tuple[bytes | None, ...]


def shard_databases(host: MySQLHost) -> list[str]:
    return sorted(db for db in host.databases() if SHARD_DATABASE.match(db))


@dataclass
class Throttle:
    """Holds the copy back while the master is busy: at most ``max_threads_running``
    statements running on it, checked at most every ``interval`` seconds (by any stream)."""

    master: MySQLHost
    max_threads_running: int = 32
    interval: float = 1.0
    paused: float = 0.0  # seconds, in all
    _checked: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def running(self) -> int:
        rows = self.master.query("SHOW GLOBAL STATUS LIKE 'Threads_running'")
        return int(rows[0]["Value"]) if rows else 0

    def wait(self) -> None:
        with self._lock:  # one connection, and one pause for every stream
            now = time.monotonic()
            if now - self._checked < self.interval:
                return
            deadline = now + PAUSE_CAP
            while self.running() > self.max_threads_running and time.monotonic() < deadline:
                time.sleep(0.5)
            self._checked = time.monotonic()
            self.paused += self._checked - now


@dataclass(frozen=True)
class Copied:
    databases: int
    gtid: str  # the snapshot's GTID position on the master
    bytes: int
    paused: float  # seconds the copy waited for the master's load
    held: float  # seconds the master's commits were held while the snapshots opened


class _Progress:
    """Databases started, across streams: ``say`` every eighth of them."""

    def __init__(self, total: int, say: Callable[[str], None]) -> None:
        self.total, self.say, self.done = total, say, 0
        self._lock = threading.Lock()

    def tick(self) -> None:
        with self._lock:
            if self.done and self.done % max(1, self.total // 8) == 0:
                self.say(f"shards {self.done}/{self.total}")
            self.done += 1


class _Text:
    """A session that reads and writes every value as the server's text (bytes)."""

    def __init__(self, host: MySQLHost, *setup: str) -> None:
        import MySQLdb

        self.name = f"{host.host}:{host.port}"
        try:
            self._connection = MySQLdb.connect(
                host=host.host, port=host.port, user=host.user, password=host.password,
                connect_timeout=CONNECT_TIMEOUT, read_timeout=READ_TIMEOUT, charset="utf8mb4",
                use_unicode=False, conv={}, autocommit=True,
            )  # fmt: skip
        except MySQLdb.Error as exc:
            raise HostError(f"{self.name} cannot be reached: {exc}") from None
        for statement in setup:
            self.run(statement)

    def run(self, sql: str | bytes) -> None:
        self._rows(sql, fetch=False)

    def rows(self, sql: str) -> list[Row]:
        return self._rows(sql, fetch=True)

    def stream(self, sql: str) -> Iterator[Row]:
        """The rows of ``sql`` as the server sends them, ``FETCH_ROWS`` held at a time."""
        import MySQLdb.cursors

        cursor = self._connection.cursor(MySQLdb.cursors.SSCursor)
        with self._errors(sql):
            cursor.execute(sql)
        try:
            while True:
                with self._errors(sql):
                    batch = cursor.fetchmany(FETCH_ROWS)
                if not batch:
                    return
                yield from batch
        finally:
            cursor.close()

    def literal(self, row: Row) -> bytes:
        quote = self._connection.string_literal
        return b"(" + b",".join(b"NULL" if v is None else quote(v) for v in row) + b")"

    def close(self) -> None:
        with suppress(Exception):
            self._connection.close()

    def _rows(self, sql: str | bytes, *, fetch: bool) -> list[Row]:
        with self._errors(sql):
            cursor = self._connection.cursor()
            cursor.execute(sql)
            return list(cursor.fetchall() or []) if fetch else []

    @contextmanager
    def _errors(self, sql: str | bytes) -> Iterator[None]:
        """A MySQLdb error as a HostError naming the server and the statement."""
        import MySQLdb

        try:
            yield
        except MySQLdb.Error as exc:
            text = sql if isinstance(sql, str) else sql[:200].decode(errors="replace")
            raise HostError(f"{self.name}: {' '.join(text.split()[:4])}: {exc}") from None


def _name(identifier: bytes | str) -> str:
    text = identifier.decode() if isinstance(identifier, bytes) else identifier
    return "`" + text.replace("`", "``") + "`"


class _Stream(threading.Thread):
    """One slice of the databases, read from one snapshot on the master and written on
    the target: the thread opens its snapshot (``opened``), waits for ``go``, and copies
    unless ``stop`` is set; ``error`` says what failed. It closes its own sessions."""

    def __init__(self, master: MySQLHost, target: MySQLHost, databases: list[str], progress: _Progress, throttle: Throttle, signals: tuple[threading.Event, threading.Event]) -> None:  # fmt: skip
        super().__init__(daemon=True)
        self.databases, self.progress, self.throttle = databases, progress, throttle
        self.go, self.stop = signals
        self.opened = threading.Event()
        self.position: SnapshotPosition | None = None
        self.bytes = 0
        self.error: Exception | None = None
        self.source = _Text(master, "SET SESSION time_zone = '+00:00', net_write_timeout = 600", "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # fmt: skip
        try:
            self.target = _Text(target, "SET SESSION sql_log_bin = 0, time_zone = '+00:00', sql_mode = 'STRICT_ALL_TABLES,NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION', foreign_key_checks = 0, unique_checks = 0")  # fmt: skip
        except HostError:
            self.source.close()
            raise

    def run(self) -> None:
        try:
            self.position = self._open()
            self.opened.set()
            self.go.wait()
            for database in self.databases:
                if self.stop.is_set():
                    return
                self.throttle.wait()
                self.progress.tick()
                self._copy(database)
        except Exception as error:  # noqa: BLE001 - reported by copy_databases
            self.error = error
            self.stop.set()
        finally:
            self.opened.set()
            self.source.close()
            self.target.close()

    def _open(self) -> SnapshotPosition:
        self.source.run("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        status = {
            (row[0] or b"").lower(): row[1]
            for row in self.source.rows("SHOW STATUS LIKE 'binlog_snapshot_%'")
        }
        file = (status.get(b"binlog_snapshot_file") or b"").decode()
        offset = int(status.get(b"binlog_snapshot_position") or 0)
        (gtid,), = self.source.rows(f"SELECT BINLOG_GTID_POS('{file}', {offset})")  # fmt: skip
        return SnapshotPosition(file, offset, (gtid or b"").decode())

    def _copy(self, database: str) -> None:
        db = _name(database)
        ((_, create),) = self.source.rows(f"SHOW CREATE DATABASE {db}")
        self.target.run(create or b"")
        self.target.run(f"USE {db}")
        tables = self.source.rows(f"SHOW FULL TABLES FROM {db} WHERE Table_type = 'BASE TABLE'")
        for table, _ in tables:
            name = f"{db}.{_name(table or b'')}"
            ((_, create),) = self.source.rows(f"SHOW CREATE TABLE {name}")
            self.target.run(create or b"")
            self._rows(name)

    def _rows(self, name: str) -> None:
        head = f"INSERT INTO {name} VALUES ".encode()
        batch: list[bytes] = []
        size = 0
        for row in self.source.stream(f"SELECT * FROM {name}"):
            batch.append(self.target.literal(row))
            size += len(batch[-1]) + 1
            if size >= BATCH_BYTES:
                self._insert(head, batch)
                batch, size = [], 0
        if batch:
            self._insert(head, batch)

    def _insert(self, head: bytes, batch: list[bytes]) -> None:
        statement = head + b",".join(batch)
        self.target.run(statement)
        self.bytes += len(statement)


def copy_databases(
    master: MySQLHost,
    target: MySQLHost,
    databases: list[str],
    *,
    throttle: Throttle,
    parallel: int = 4,
    say: Callable[[str], None] = lambda line: None,
) -> Copied:
    """Copy ``databases`` of ``master`` onto ``target`` from one consistent snapshot, in
    ``parallel`` streams; the snapshot's GTID position comes back (not yet set on the
    target). ``master`` holds the commits while the streams open their snapshots (no other
    statement may run on it meanwhile). Raises HostError if a stream fails (the target
    then holds part of the copy) or the streams' snapshots differ."""
    parallel = max(1, parallel)
    slices = [databases[n::parallel] for n in range(parallel) if databases[n::parallel]]
    progress = _Progress(len(databases), say)
    go, stop = threading.Event(), threading.Event()
    streams: list[_Stream] = []
    try:
        for part in slices:
            streams.append(_Stream(master, target, part, progress, throttle, (go, stop)))
    except HostError:
        for stream in streams:
            stream.source.close()
            stream.target.close()
        raise
    hold, held = len(streams) > 1, 0.0
    try:
        if hold:
            master.query("SET SESSION lock_wait_timeout = 5")
            master.query("BACKUP STAGE START")
            master.query("BACKUP STAGE BLOCK_COMMIT")
        began = time.monotonic()
        try:
            for stream in streams:
                stream.start()
            for stream in streams:
                stream.opened.wait(max(0.0, began + HOLD_SECONDS - time.monotonic()))
        finally:
            if hold:
                master.query("BACKUP STAGE END")
                held = time.monotonic() - began
        positions = {stream.position for stream in streams}
        if not all(stream.opened.is_set() for stream in streams):
            raise HostError(f"the streams did not open their snapshots in {HOLD_SECONDS:g}s")
        if len(positions) != 1 or not streams[0].position or not streams[0].position.gtid:
            failed = [str(stream.error) for stream in streams if stream.error]
            raise HostError("; ".join(failed) or f"the streams did not read one snapshot ({sorted(map(str, positions))})")  # fmt: skip
    except BaseException:
        stop.set()
        go.set()
        raise
    go.set()
    try:
        for stream in streams:
            stream.join()
    except BaseException:  # Ctrl-C, SIGTERM: the streams stop after their database
        stop.set()
        raise
    failed = [str(stream.error) for stream in streams if stream.error]
    if failed:
        raise HostError("; ".join(failed))
    say(f"shards {progress.done}/{len(databases)}")
    return Copied(progress.done, streams[0].position.gtid, sum(s.bytes for s in streams), throttle.paused, held)  # fmt: skip
