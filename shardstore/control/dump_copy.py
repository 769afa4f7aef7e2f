"""A consistent copy of a master's shard databases onto another server, taken without
stopping writes: ``mariadb-dump --single-transaction --gtid --master-data=2`` piped into
the ``mariadb`` client on the target, both over the MySQL port (the only one open between
shard hosts), as the operator's account.

One dump, one snapshot: MariaDB starts the dump's transaction ``WITH CONSISTENT
SNAPSHOT`` and reads the binary log position of that snapshot without ``FLUSH TABLES
WITH READ LOCK``, so writes go on throughout, and the dump ends with the snapshot's GTID
position (``-- SET GLOBAL gtid_slave_pos='...'``, commented out by ``--master-data=2``).
That position is read from the stream and returned: the caller sets it once the load
succeeded, so a copy that failed half-way never says where replication should start.

The load runs with ``sql_log_bin=0``: the copy must not enter the target's own binary
log, or GTID strict mode would refuse the master's transactions that follow.

Throttled by the master's load: between databases the copy stops reading the dump (the
dump then waits on its pipe, and the master's session on its socket) while the master's
``Threads_running`` is above a bound, each pause at most ``PAUSE_CAP`` seconds, so that
the master's ``net_write_timeout`` (60 s by default) never ends the dump. Passwords reach
the two programs in option files readable by this user only, never on their command line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .mysql_hosts import HostError, MySQLHost

#: The databases a shard host holds for the shards: ``db00042``, and the copies a split
#: or its revert renamed aside (``db00042_split7``, ``db00042_reverted7``).
SHARD_DATABASE = re.compile(r"^db[0-9]{5}(_[a-z]+[0-9]+)?$")
#: Statements the load does not need, each a round trip per table (59,392 tables on a
#: host of the local cluster): the target's databases are new (no ``DROP TABLE``), no one
#: else writes there (no ``LOCK TABLES``), InnoDB has no ``DISABLE KEYS``, and shard tables
#: have no triggers. Loading 100 shards took 6.8 s without them, 39.6 s with.
LEAN = ("--skip-add-drop-table", "--skip-add-locks", "--skip-disable-keys", "--skip-triggers")
#: The longest single pause for the master's load (seconds).
PAUSE_CAP = 30.0
_USE = re.compile(rb"^USE `([^`]+)`;")
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
    statements running on it, checked at most every ``interval`` seconds."""

    master: MySQLHost
    max_threads_running: int = 32
    interval: float = 1.0
    paused: float = 0.0  # seconds, in all
    _checked: float = 0.0

    def running(self) -> int:
        rows = self.master.query("SHOW GLOBAL STATUS LIKE 'Threads_running'")
        return int(rows[0]["Value"]) if rows else 0

    def wait(self) -> None:
        now = time.monotonic()
        if now - self._checked < self.interval:
            return
        self._checked = now
        deadline = now + PAUSE_CAP
        while self.running() > self.max_threads_running and time.monotonic() < deadline:
            time.sleep(0.5)
        self.paused += time.monotonic() - now


@dataclass(frozen=True)
class Copied:
    databases: int
    gtid: str  # the snapshot's GTID position on the master
    bytes: int
    paused: float


def copy_databases(
    master: MySQLHost,
    target: MySQLHost,
    databases: list[str],
    *,
    throttle: Throttle,
    say: Callable[[str], None] = lambda line: None,
) -> Copied:
    """Load ``databases`` of ``master`` onto ``target`` from one consistent snapshot; the
    snapshot's GTID position comes back (not yet set on the target). Raises HostError if
    either program fails (the target then holds part of the copy)."""
    dump, load = tool("mariadb-dump"), tool("mariadb")
    with (
        tempfile.TemporaryFile() as dump_errors,
        tempfile.TemporaryFile() as load_errors,
        _options(master) as master_options,
        _options(target) as target_options,
    ):
        errors = {"mariadb-dump": dump_errors, "mariadb (the load)": load_errors}
        dumper = subprocess.Popen(
            [
                dump, f"--defaults-extra-file={master_options}", "--single-transaction",
                "--gtid", "--master-data=2", "--quick", "--max-allowed-packet=1G", *LEAN,
                "--databases", *databases,
            ],
            stdout=subprocess.PIPE, stderr=errors["mariadb-dump"], stdin=subprocess.DEVNULL,
        )  # fmt: skip
        loader = subprocess.Popen(
            [
                load, f"--defaults-extra-file={target_options}", "--binary-mode",
                "--max-allowed-packet=1G", "--init-command=SET SESSION sql_log_bin = 0",
            ],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errors["mariadb (the load)"],
        )  # fmt: skip
        try:
            gtid, done, size = _pump(dumper, loader, len(databases), throttle, say)
        finally:
            for process in (dumper, loader):
                if process.poll() is None:
                    process.kill()
                process.wait()
                for pipe in (process.stdin, process.stdout):
                    if pipe is not None:
                        with suppress(OSError):  # a killed load's pipe: its data is moot
                            pipe.close()
        failed = [
            f"{name} failed (exit {process.returncode}): {_tail(stream)}"
            for (name, stream), process in zip(errors.items(), (dumper, loader), strict=True)
            if process.returncode != 0
        ]
    if failed:
        raise HostError("; ".join(failed))
    if gtid is None:
        raise HostError("the dump has no GTID position (is the master's binary log on?)")
    return Copied(done, gtid, size, throttle.paused)


def _pump(
    dumper: subprocess.Popen[bytes],
    loader: subprocess.Popen[bytes],
    total: int,
    throttle: Throttle,
    say: Callable[[str], None],
) -> tuple[str | None, int, int]:
    """Feed the dump to the load line by line, noting each database it starts (progress,
    and a chance to throttle) and the snapshot's position; (position, databases, bytes)."""
    assert dumper.stdout is not None and loader.stdin is not None
    gtid: str | None = None
    done = size = 0
    every = max(1, total // 8)
    try:
        for line in dumper.stdout:
            if line.startswith(b"USE `") and _USE.match(line):
                if done and done % every == 0:
                    say(f"shards {done}/{total}")
                throttle.wait()
                done += 1
            elif line.startswith(b"-- SET GLOBAL gtid_slave_pos") and (found := _GTID.match(line)):  # fmt: skip
                gtid = found.group(1).decode()
            loader.stdin.write(line)
            size += len(line)
        loader.stdin.close()
    except BrokenPipeError:
        dumper.kill()  # the load died: its exit status says why
    dumper.wait()
    loader.wait()
    say(f"shards {done}/{total}")
    return gtid, done, size


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
