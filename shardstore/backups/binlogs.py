"""A master's binary logs archived as they are written (as pinterest/mysql_utils'
archive_mysql_binlogs, "to perform point-in-time recoveries in the case where all servers
in a replica set are lost"), and replayed onto a restored server up to a time or a GTID.

**Archiving** (``Archiver``): ``mariadb-binlog --read-from-remote-server --raw
--stop-never`` follows the master as a replica would (its own server id), writing each
binary log into a local spool as it grows. Each pass (every second) puts what grew into
the store: a log the master has rotated away from is put once more, whole and ``closed``,
and leaves the spool; the open one is put again each time it has grown, so when every host
of a range dies at once only the writes of the last pass are missing. Each log is
``binlogs/HOST/FILE`` beside ``FILE.json``: its size, its sha256, whether it is closed, and
the GTID state at its start (its ``Gtid list`` event), by which a replay finds where to
begin. Started again, an archiver takes up from the newest log it had not closed.

**Replay** (``replay``): the logs from the one that holds the position after a backup's
onwards, checked first (each against its sha256, none missing from the chain), read by
``mariadb-binlog`` from that position (exclusive) up to a time (inclusive: the last
transaction committed at or before it) or a GTID (inclusive), into the server's client.
Each transaction keeps its GTID, so the server ends at the range's position.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path

from ..control.mysql_hosts import endpoint
from .physical import BackupError
from .store import BackupStore, BackupStoreError

PREFIX = "binlogs"
#: Seconds between two passes of an archiver: the most acknowledged writes it can miss.
INTERVAL = 1.0
_GTID_LIST = re.compile(r"Gtid list \[([^\]]*)\]")
_NUMBERED = re.compile(r"^(?P<base>.+)\.(?P<number>\d{6,})$")


@dataclass(frozen=True)
class ArchivedLog:
    """One binary log of ``host`` in the archive."""

    host: str
    file: str  # the master's name for it: db1a-bin.000042
    size: int
    sha256: str
    closed: bool  # the master has gone on to the next: this is all of it
    starts: str  # the GTID state before its first transaction: "0-1-41,7-3-2"

    @property
    def key(self) -> str:
        return f"{PREFIX}/{self.host}/{self.file}"

    @property
    def number(self) -> int:
        found = _NUMBERED.match(self.file)
        return int(found["number"]) if found else -1


def archived(store: BackupStore, host: str) -> list[ArchivedLog]:
    """The archive's logs of ``host``, in the master's order."""
    logs = []
    for key in store.keys(f"{PREFIX}/{host}/"):
        if key.endswith(".json"):
            try:
                logs.append(ArchivedLog(**json.loads(store.get(key))))
            except (BackupStoreError, ValueError, TypeError):
                continue  # not one of ours
    return sorted(logs, key=lambda log: log.number)


def gtid_state(text: str) -> dict[int, int]:
    """``"0-1-41,7-3-2"`` as each domain's last sequence number: {0: 41, 7: 2}."""
    state = {}
    for gtid in filter(None, (part.strip() for part in text.split(","))):
        domain, _server, sequence = (int(n) for n in gtid.split("-"))
        state[domain] = sequence
    return state


def covers(log: ArchivedLog, position: str) -> bool:
    """Whether ``log`` starts at or before ``position``: nothing after its start is in
    ``position`` that an earlier log would have to supply."""
    before, have = gtid_state(log.starts), gtid_state(position)
    return all(sequence <= have.get(domain, 0) for domain, sequence in before.items())


class Archiver:
    """Archives the binary logs of ``host`` (at ``address``, as ``login``) into ``store``."""

    def __init__(
        self,
        store: BackupStore,
        *,
        host: str,
        address: str,
        login: tuple[str, str],
        spool: Path,
        first: Callable[[], str],
        say: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.store, self.host, self.address, self.login = store, host, address, login
        self.spool = spool
        self.first = first  # the master's oldest binary log: where an empty archive starts
        self.say = say
        self._reader: subprocess.Popen[bytes] | None = None
        self._scratch = tempfile.TemporaryDirectory(prefix="pinboard-archiver-")  # its login
        self.put: dict[str, int] = {}  # file -> its size the store holds
        self._starts: dict[str, str] = {}  # file -> the GTID state it starts at

    def run(self, *, interval: float = INTERVAL, until: Callable[[], bool] = lambda: False) -> None:  # fmt: skip
        """Archive pass after pass, until ``until()`` says stop."""
        try:
            while not until():
                self.archive_pass()
                time.sleep(interval)
        finally:
            self.stop()

    def archive_pass(self) -> list[ArchivedLog]:
        """Put what grew since the last pass; (re)start the reader if it is not running
        (the master was down, say). What was put."""
        self.spool.mkdir(parents=True, exist_ok=True)
        put = self._put_grown()
        if self._reader is None or self._reader.poll() is not None:
            self._start_reader()
        return put

    def _put_grown(self) -> list[ArchivedLog]:
        files = sorted(self.spool.iterdir(), key=lambda p: _number(p.name))
        put = []
        for path in files:
            closed = path != files[-1]
            if closed or self.put.get(path.name) != path.stat().st_size:
                data = path.read_bytes()
                if path.name not in self._starts:
                    self._starts[path.name] = _starts(path)
                log = ArchivedLog(self.host, path.name, len(data), hashlib.sha256(data).hexdigest(), closed, self._starts[path.name])  # fmt: skip
                self.store.put(log.key, data)
                self.store.put(f"{log.key}.json", json.dumps(asdict(log)).encode())
                self.put[path.name] = len(data)
                put.append(log)
            if closed:
                path.unlink()  # whole in the archive
                self._starts.pop(path.name, None)
        return put

    def _start_reader(self) -> None:
        spooled = sorted((p.name for p in self.spool.iterdir()), key=_number)
        logs = archived(self.store, self.host)
        if spooled:
            start = spooled[-1]
        elif logs and not logs[-1].closed:
            start = logs[-1].file
        elif logs:
            start = _next(logs[-1].file)
        else:
            start = self.first()
        server, port = endpoint(self.address)
        options = _login_file(self.login, Path(self._scratch.name))
        self._reader = subprocess.Popen(
            ["mariadb-binlog", f"--defaults-extra-file={options}", "--read-from-remote-server",
             "--raw", "--stop-never", f"--stop-never-slave-server-id={_server_id(self.host)}",
             f"--host={server}", f"--port={port}", f"--result-file={self.spool}/", start],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.say(f"archiving {self.host}'s binary logs from {start}")

    def stop(self) -> None:
        if self._reader is not None and self._reader.poll() is None:
            self._reader.terminate()
            self._reader.wait(10)
        self._scratch.cleanup()


@dataclass(frozen=True)
class Replayed:
    logs: list[str]  # the files read, in order
    seconds: float


def chain(store: BackupStore, host: str, after: str) -> list[ArchivedLog]:
    """The archived logs of ``host`` to replay from the position ``after``: the newest that
    covers it, and every one since, none missing. BackupError when there is a gap."""
    logs = archived(store, host)
    if not logs:
        raise BackupError(f"the archive has no binary log of {host}")
    starting = [i for i, log in enumerate(logs) if covers(log, after)]
    if not starting:
        raise BackupError(f"the archive's logs of {host} begin at {logs[0].starts or 'nothing'} ({logs[0].file}), after {after or 'nothing'}: the transactions between are missing")  # fmt: skip
    needed = logs[starting[-1] :]
    for earlier, later in pairwise(needed):
        if later.number != earlier.number + 1 or not earlier.closed:
            raise BackupError(f"the archive's binary logs of {host} have a gap after {earlier.file}: {later.file} follows")  # fmt: skip
    return needed


def replay(
    store: BackupStore,
    host: str,
    *,
    after: str,
    into: str,
    login: tuple[str, str],
    to_time: float | None = None,
    to_gtid: str | None = None,
) -> Replayed:
    """Apply ``host``'s archived transactions after ``after`` up to ``to_time`` (Unix
    seconds: those committed at or before it) or ``to_gtid`` (or all) to the server at
    ``into``. BackupError, with nothing applied, when a log is missing or corrupt."""
    began = time.monotonic()
    logs = chain(store, host, after)
    with tempfile.TemporaryDirectory(prefix="pinboard-replay-") as scratch:
        paths = []
        for log in logs:
            data = store.get(log.key)
            if hashlib.sha256(data).hexdigest() != log.sha256:
                raise BackupError(f"{log.key} does not match its sha256: the archive is corrupt")
            path = Path(scratch) / log.file
            path.write_bytes(data)
            paths.append(str(path))
        reading = ["mariadb-binlog", "--skip-gtid-strict-mode"]
        if after:
            reading.append(f"--start-position={after}")
        if to_gtid:
            reading.append(f"--stop-position={to_gtid}")
        if to_time is not None:  # the first event after the second asked for
            reading.append(f"--stop-datetime={time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(int(to_time) + 1))}")  # fmt: skip
        server, port = endpoint(into)
        options = _login_file(login, Path(scratch))
        with open(Path(scratch) / "errors", "wb") as errors:
            reader = subprocess.Popen([*reading, *paths], stdout=subprocess.PIPE, stderr=errors, env={**os.environ, "TZ": "UTC"})  # fmt: skip
            client = subprocess.Popen(
                ["mariadb", f"--defaults-extra-file={options}", f"--host={server}", f"--port={port}", "--binary-mode"],
                stdin=reader.stdout, stderr=errors,
            )  # fmt: skip
            assert reader.stdout is not None
            reader.stdout.close()  # the client's now
            client.wait()
            reader.wait()
        if reader.returncode != 0 or client.returncode != 0:
            said = (Path(scratch) / "errors").read_text(errors="replace").strip().splitlines()[-3:]  # fmt: skip
            raise BackupError(f"the replay of {host}'s binary logs failed (mariadb-binlog {reader.returncode}, mariadb {client.returncode}): {' '.join(said) or 'no output'}")  # fmt: skip
    return Replayed([log.file for log in logs], time.monotonic() - began)


def _login_file(login: tuple[str, str], directory: Path) -> Path:
    """An options file with the login (never a password on a command line)."""
    options = directory / "login.cnf"
    options.write_text(f"[client]\nuser={login[0]}\npassword={login[1]}\n")
    options.chmod(0o600)
    return options


def _starts(path: Path) -> str:
    """The GTID state a log starts at: its ``Gtid list`` event, near its head."""
    found = ""
    with subprocess.Popen(["mariadb-binlog", str(path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as reader:  # fmt: skip
        assert reader.stdout is not None
        for line in reader.stdout:
            if match := _GTID_LIST.search(line):
                found = match.group(1)
                break
        reader.kill()
    return found


def _number(name: str) -> int:
    found = _NUMBERED.match(name)
    return int(found["number"]) if found else -1


def _next(name: str) -> str:
    found = _NUMBERED.match(name)
    if found is None:
        raise BackupError(f"{name} is not a binary log's name")
    width = len(found["number"])
    return f"{found['base']}.{int(found['number']) + 1:0{width}d}"


def _server_id(host: str) -> int:
    """The archiver's server id as the master's replica: one per host archived, apart from
    the fleet's (which are small), so a second archiver of the host takes the first's place."""
    return 4_000_000_000 + zlib.crc32(host.encode()) % 200_000_000
