"""A consistent copy of a master's shard databases onto another server, taken while writes
go on: ``mariadb-dump --single-transaction --gtid --master-data=2`` piped into the
``mariadb`` client on the target, both over the MySQL port (the only one open between
shard hosts), as the operator's account.

One snapshot, several streams. A host of the local cluster holds 59,392 tables, and the
copy is a few statements per table each way, so it is run as ``parallel`` dump/load pairs
over interleaved slices of the databases. They read one snapshot: the master's commits
are held (``BACKUP STAGE BLOCK_COMMIT``: statements run, only their commits wait) until
every dump has opened its ``CONSISTENT SNAPSHOT`` transaction, a fraction of a second,
at most ``HOLD_SECONDS``; every dump then reports the same binary log position, which is
checked. (One stream needs no hold: MariaDB reads a snapshot's position without ``FLUSH
TABLES WITH READ LOCK``.) The snapshot's GTID position, which each dump writes at its end
(``-- SET GLOBAL gtid_slave_pos='...'``), is read from the streams and returned: the
caller sets it once the load succeeded, so a copy that failed half-way never says where
replication should start.

The load runs with ``sql_log_bin=0``: the copy must not enter the target's own binary
log, or GTID strict mode would refuse the master's transactions that follow.

Throttled by the master's load: between databases a stream stops reading its dump (the
dump then waits on its pipe, and the master's session on its socket) while the master's
``Threads_running`` is above a bound, each pause at most ``PAUSE_CAP`` seconds, so that
the master's ``net_write_timeout`` (60 s by default) never ends the dump. Passwords reach
the programs in option files readable by this user only, never on their command line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from .mysql_hosts import HostError, MySQLHost

#: The databases a shard host holds for the shards: ``db00042``, and the copies a split
#: or its revert renamed aside (``db00042_split7``, ``db00042_reverted7``).
SHARD_DATABASE = re.compile(r"^db[0-9]{5}(_[a-z]+[0-9]+)?$")
#: Statements the load does not need, each a round trip per table: the target's databases
#: are new (no ``DROP TABLE``), no one else writes there (no ``LOCK TABLES``), InnoDB has
#: no ``DISABLE KEYS``, and shard tables have no triggers. Loading 100 shards of the local
#: cluster took 6.8 s without them, 39.6 s with.
LEAN = ("--skip-add-drop-table", "--skip-add-locks", "--skip-disable-keys", "--skip-triggers")
#: The longest single pause for the master's load, and the longest hold of its commits
#: while the dumps open their snapshots (seconds).
PAUSE_CAP = 30.0
HOLD_SECONDS = 10.0
_POSITION = b"-- CHANGE MASTER TO MASTER_LOG_FILE="
_GTID = re.compile(rb"^-- SET GLOBAL gtid_slave_pos='([0-9,-]*)';")


def shard_databases(host: MySQLHost) -> list[str]:
    return sorted(db for db in host.databases() if SHARD_DATABASE.match(db))


def tool(name: str) -> str:
    """The path of a MariaDB client program, or a HostError saying what to install."""
    path = shutil.which(name)
    if path is None:
        raise HostError(f"{name} is not installed (Debian package mariadb-client): a rebuild needs it")  # fmt: skip
    return path


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


class _Stream(threading.Thread):
    """One dump piped into one load, line by line: it notes where its snapshot reads (its
    binary log position, then its GTID position) and each database it starts."""

    def __init__(self, dump: list[str], load: list[str], progress: _Progress, throttle: Throttle, stack: ExitStack) -> None:  # fmt: skip
        super().__init__(daemon=True)
        self.progress, self.throttle = progress, throttle
        self.errors = [stack.enter_context(tempfile.TemporaryFile()) for _ in range(2)]  # noqa: SIM115 - the stack closes them
        self.dumper = subprocess.Popen(dump, stdout=subprocess.PIPE, stderr=self.errors[0], stdin=subprocess.DEVNULL)  # fmt: skip
        self.loader = subprocess.Popen(load, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.errors[1])  # fmt: skip
        self.opened = threading.Event()  # its snapshot is open: it printed its position
        self.position = self.gtid = ""
        self.bytes = 0

    def run(self) -> None:
        assert self.dumper.stdout is not None and self.loader.stdin is not None
        try:
            for line in self.dumper.stdout:
                if line.startswith(b"USE `"):
                    self.throttle.wait()
                    self.progress.tick()
                elif line.startswith(_POSITION):
                    self.position = line.decode().strip()
                    self.opened.set()
                elif line.startswith(b"-- SET GLOBAL") and (found := _GTID.match(line)):
                    self.gtid = found.group(1).decode()
                self.loader.stdin.write(line)
                self.bytes += len(line)
            self.loader.stdin.close()
        except (OSError, ValueError):  # the load died (its exit status says why), or killed
            self.kill()
        finally:
            self.opened.set()  # (a dump that failed first: its exit status says why)
            self.dumper.wait()
            self.loader.wait()

    def kill(self) -> None:
        for process in (self.dumper, self.loader):
            if process.poll() is None:
                process.kill()

    def close(self) -> list[str]:
        """Stop both programs if they run, close the pipes; what failed."""
        self.kill()
        failed = []
        for name, process, errors in zip(("mariadb-dump", "mariadb (the load)"), (self.dumper, self.loader), self.errors, strict=True):  # fmt: skip
            process.wait()
            for pipe in (process.stdin, process.stdout):
                if pipe is not None:
                    with suppress(OSError):  # a killed load's pipe: its data is moot
                        pipe.close()
            if process.returncode != 0:
                failed.append(f"{name} failed (exit {process.returncode}): {_tail(errors)}")
        return failed


def copy_databases(
    master: MySQLHost,
    target: MySQLHost,
    databases: list[str],
    *,
    throttle: Throttle,
    parallel: int = 4,
    say: Callable[[str], None] = lambda line: None,
) -> Copied:
    """Load ``databases`` of ``master`` onto ``target`` from one consistent snapshot, in
    ``parallel`` streams; the snapshot's GTID position comes back (not yet set on the
    target). ``master`` holds the commits while the streams open their snapshots (no other
    statement may run on it meanwhile). Raises HostError if a program fails (the target
    then holds part of the copy) or the streams' snapshots differ."""
    dump, load = tool("mariadb-dump"), tool("mariadb")
    parallel = max(1, parallel)
    slices = [databases[n::parallel] for n in range(parallel) if databases[n::parallel]]
    progress = _Progress(len(databases), say)
    held = 0.0
    with ExitStack() as stack:
        source, into = stack.enter_context(_options(master)), stack.enter_context(_options(target))
        dump_argv = [dump, f"--defaults-extra-file={source}", "--single-transaction", "--gtid", "--master-data=2", "--quick", "--max-allowed-packet=1G", *LEAN, "--databases"]  # fmt: skip
        load_argv = [load, f"--defaults-extra-file={into}", "--binary-mode", "--max-allowed-packet=1G", "--init-command=SET SESSION sql_log_bin = 0"]  # fmt: skip
        streams: list[_Stream] = []
        try:
            hold = len(slices) > 1
            if hold:
                master.query("SET SESSION lock_wait_timeout = 5")
                master.query("BACKUP STAGE START")
                master.query("BACKUP STAGE BLOCK_COMMIT")
            began = time.monotonic()
            try:
                for part in slices:
                    streams.append(_Stream([*dump_argv, *part], load_argv, progress, throttle, stack))  # fmt: skip
                    streams[-1].start()
                for stream in streams:
                    stream.opened.wait(max(0.0, began + HOLD_SECONDS - time.monotonic()))
            finally:
                if hold:
                    master.query("BACKUP STAGE END")
                    held = time.monotonic() - began
            if not all(stream.opened.is_set() for stream in streams):
                raise HostError(f"the dumps did not open their snapshots in {HOLD_SECONDS:g}s")
            for stream in streams:
                stream.join()
        finally:
            failed = [line for stream in streams for line in stream.close()]
    if failed:
        raise HostError("; ".join(failed))
    positions = {stream.position for stream in streams}
    gtids = {stream.gtid for stream in streams}
    if len(positions) != 1 or len(gtids) != 1 or not streams[0].gtid:
        raise HostError(f"the dumps did not read one snapshot (positions {sorted(positions)}, GTIDs {sorted(gtids)})")  # fmt: skip
    say(f"shards {progress.done}/{len(databases)}")
    return Copied(progress.done, streams[0].gtid, sum(s.bytes for s in streams), throttle.paused, held)  # fmt: skip


@contextmanager
def _options(host: MySQLHost) -> Iterator[str]:
    """An option file with ``host``'s address and credentials, mode 0600, removed after."""
    with tempfile.TemporaryDirectory(prefix="rebuild-") as directory:
        path = Path(directory) / "client.cnf"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)

        def quoted(value: str) -> str:
            return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'

        text = (
            f"[client]\nhost={host.host}\nport={host.port}\nprotocol=TCP\n"
            f"user={quoted(host.user)}\npassword={quoted(host.password)}\n"
        )
        with os.fdopen(descriptor, "w") as file:
            file.write(text)
        yield str(path)


def _tail(stream: IO[bytes]) -> str:
    stream.seek(0)
    lines = stream.read().decode(errors="replace").strip().splitlines()
    return " / ".join(lines[-3:]) or "no message"
