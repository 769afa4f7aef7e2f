"""The archive of the masters' binary logs (as pinterest/mysql_utils' archive_mysql_binlogs,
"to perform point-in-time recoveries in the case where all servers in a replica set are
lost"): its layout, and the replay of it onto a restored server up to a time or a GTID.

**Archiving** (``archiving.Archiver`` writes it): ``mariadb-binlog --read-from-remote-server --raw
--stop-never`` follows the master as a replica would (its own server id), writing each
binary log into a local spool as it grows. Each pass (every second) puts what grew into
the store as a piece of its own, so when every host of a range dies at once only the
writes of the last pass are missing, and a pass puts no more than the master wrote. Every
object is written once (the deploy's bucket locks them for the retention):
``binlogs/HOST/FILE@CREATED/OFFSET-SIZE.SHA256`` for each piece (``CREATED``: when the
master began the log, since a server whose binary log was reset names its logs again),
``starts`` (the GTID state at the log's start, by which a replay finds where to begin)
and, once the master has rotated away from it, ``closed`` (its size and sha256). A replay
reads the logs the master began since its binary log was last reset. Started again, an
archiver takes up from the newest log it had not closed, after the bytes already kept.

**Replay** (``replay``): the logs from the one that holds the position after a backup's
onwards, checked first (each piece against its sha256, no bytes missing from a log, no
log missing from the chain, a closed log whole), read by
``mariadb-binlog`` from that position (exclusive) up to a time (inclusive: the last
transaction committed at or before it) or a GTID (inclusive), into the server's client.
Each transaction keeps its GTID, so the server ends at the range's position.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from ..control.mysql_hosts import endpoint
from .physical import BackupError
from .store import BackupStore, BackupStoreError

PREFIX = "binlogs"
#: Seconds between two passes of an archiver: the most acknowledged writes it can miss.
INTERVAL = 1.0
_NUMBERED = re.compile(r"^(?P<base>.+)\.(?P<number>\d{6,})$")
_PIECE = re.compile(r"^(?P<offset>\d{15})-(?P<size>\d+)\.(?P<sha256>[0-9a-f]{64})$")


@dataclass(frozen=True)
class Piece:
    offset: int
    size: int
    sha256: str
    key: str


@dataclass(frozen=True)
class ArchivedLog:
    """One binary log of ``host`` in the archive."""

    host: str
    file: str  # the master's name for it: db1a-bin.000042
    created: int  # when the master began it (its first event's time): a name is used again
    pieces: tuple[Piece, ...]
    starts: str  # the GTID state before its first transaction: "0-1-41,7-3-2"
    closed: dict[str, Any] | None  # size and sha256 once the master went on to the next

    @property
    def size(self) -> int:
        return sum(piece.size for piece in self.pieces)

    @property
    def number(self) -> int:
        return log_number(self.file)

    def read(self, store: BackupStore) -> bytes:
        """Its bytes, each piece checked; BackupError if one is corrupt or missing."""
        data = bytearray()
        for piece in self.pieces:
            if piece.offset != len(data):
                raise BackupError(f"{PREFIX}/{self.host}/{self.file} lacks bytes {len(data)} to {piece.offset}: the archive is corrupt")  # fmt: skip
            chunk = store.get(piece.key)
            if len(chunk) != piece.size or hashlib.sha256(chunk).hexdigest() != piece.sha256:
                raise BackupError(f"{piece.key} does not match its sha256: the archive is corrupt")
            data += chunk
        if self.closed is not None and (len(data) != self.closed["size"] or hashlib.sha256(data).hexdigest() != self.closed["sha256"]):  # fmt: skip
            raise BackupError(f"{PREFIX}/{self.host}/{self.file} is not whole: the archive is corrupt")  # fmt: skip
        return bytes(data)


def archived(store: BackupStore, host: str) -> list[ArchivedLog]:
    """The archive's logs of ``host`` in the order the master began them (a log with no
    ``starts`` yet, whose first pass was cut short, is left out)."""
    found: dict[str, dict[str, Any]] = {}
    for key in store.keys(f"{PREFIX}/{host}/"):
        log, _, name = key[len(f"{PREFIX}/{host}/") :].partition("/")
        entry = found.setdefault(log, {"pieces": []})
        if name in ("starts", "closed"):
            entry[name] = key
        elif (piece := _PIECE.match(name)) is not None:
            entry["pieces"].append(
                Piece(int(piece["offset"]), int(piece["size"]), piece["sha256"], key)
            )
    logs = []
    for log, entry in found.items():
        file, _, created = log.rpartition("@")
        if "starts" not in entry or not created.isdigit():
            continue
        try:
            starts = store.get(entry["starts"]).decode()
            closed = json.loads(store.get(entry["closed"])) if "closed" in entry else None
        except (BackupStoreError, ValueError):
            continue  # not one of ours
        pieces = tuple(sorted(entry["pieces"], key=lambda p: p.offset))
        logs.append(ArchivedLog(host, file, int(created), pieces, starts, closed))
    return sorted(logs, key=lambda log: (log.created, log.number))


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
    resets = [i for i, (earlier, later) in enumerate(pairwise(logs), 1) if later.number <= earlier.number]  # fmt: skip
    logs = (
        logs[resets[-1] :] if resets else logs
    )  # its binary log reset since (a rebuild): what follows
    starting = [i for i, log in enumerate(logs) if covers(log, after)]
    if not starting:
        raise BackupError(f"the archive's logs of {host} begin at {logs[0].starts or 'nothing'} ({logs[0].file}), after {after or 'nothing'}: the transactions between are missing")  # fmt: skip
    needed = logs[starting[-1] :]
    for earlier, later in pairwise(needed):
        if later.number != earlier.number + 1 or earlier.closed is None:
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
            path = Path(scratch) / log.file
            path.write_bytes(log.read(store))
            paths.append(str(path))
        program = shutil.which("mariadb-binlog")  # (its environment is TZ alone: no PATH)
        if program is None:
            raise BackupError("a replay needs mariadb-binlog on this machine (Debian: mariadb-client)")  # fmt: skip
        reading = [program, "--skip-gtid-strict-mode"]
        if after:
            reading.append(f"--start-position={after}")
        if to_gtid:
            reading.append(f"--stop-position={to_gtid}")
        if to_time is not None:  # the first event after the second asked for
            reading.append(f"--stop-datetime={time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(int(to_time) + 1))}")  # fmt: skip
        server, port = endpoint(into)
        options = login_file(login, Path(scratch))
        with open(Path(scratch) / "errors", "wb") as errors:
            # --stop-datetime is read in the local time zone: UTC, whatever this machine's.
            reader = subprocess.Popen([*reading, *paths], stdout=subprocess.PIPE, stderr=errors, env={"TZ": "UTC"})  # fmt: skip
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


def login_file(login: tuple[str, str], directory: Path) -> Path:
    """An options file with the login (never a password on a command line)."""
    options = directory / "login.cnf"
    options.write_text(f"[client]\nuser={login[0]}\npassword={login[1]}\n")
    options.chmod(0o600)
    return options


def log_number(name: str) -> int:
    found = _NUMBERED.match(name)
    return int(found["number"]) if found else -1


def next_log(name: str) -> str:
    found = _NUMBERED.match(name)
    if found is None:
        raise BackupError(f"{name} is not a binary log's name")
    width = len(found["number"])
    return f"{found['base']}.{int(found['number']) + 1:0{width}d}"
