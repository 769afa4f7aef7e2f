"""``shardstore backup archive``: one ``Archiver`` per master of the shard map, following the
map: a host that becomes master (a failover, a split, a restore) is archived from its next
pass on, and one that no longer is, once its archiver has put what it had. One process
archives at a time, the holder of the ``binlog-archive`` lock (ZooKeeper's in the deploy,
so a second operator host takes over when the first dies); a pass that cannot reach a
master or the store says so and goes on with the others."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..control import backup_records, documents
from ..control.context import Control
from ..control.locks import HostsBusy
from ..control.mysql_hosts import endpoint
from ..exceptions import ShardStoreError
from .binlogs import INTERVAL, PREFIX, archived, log_number, login_file, next_log
from .store import BackupStore

_GTID_LIST = re.compile(r"Gtid list \[([^\]]*)\]")
_GTID = re.compile(r"\tGTID (\d+-\d+-\d+)")
#: The lock the archiving process holds.
ARCHIVING = "binlog-archive"
#: Seconds between two records of how far each master's archive has come.
RECORD_SECONDS = 5.0


def masters(control: Control) -> dict[str, str]:
    """Each MySQL master of the map in force, with its address."""
    document = control.source.current(documents.SHARDS).document
    names = {r["master"] for r in document["ranges"]}
    return {name: str(document["hosts"][name]) for name in sorted(names) if str(document["hosts"][name]).startswith("mysql://")}  # fmt: skip


class Archiving:
    """The archivers of the map's masters, each pass brought in line with the map."""

    def __init__(self, control: Control, store: BackupStore, spool: Path, say: Callable[[str], None]) -> None:  # fmt: skip
        self.control, self.store, self.spool, self.say = control, store, spool, say
        self.archivers: dict[str, Archiver] = {}
        self.caught_up: dict[str, float] = {}  # master -> when its archive last held all
        self._recorded = 0.0
        self.record_every = RECORD_SECONDS

    def archive_pass(self) -> None:
        now = masters(self.control)
        for name in sorted(set(self.archivers) - set(now)):
            self._pass(self.archivers[name])  # what it had, then no more
            self.archivers.pop(name).stop()
            self.say(f"{name} is no longer a master: its archiving stops")
        for name, address in now.items():
            try:
                archiver = self.archivers.get(name) or self._archiver(name, address)
            except ShardStoreError as exc:  # a master down: the next pass tries again
                self.say(f"{name}: {exc}")
                continue
            self.archivers[name] = archiver
            self._pass(archiver)
            if self._holds_all(archiver):
                self.caught_up[name] = time.time()
        if time.time() - self._recorded >= self.record_every and self.caught_up:
            backup_records.archived(self.control.source, self.caught_up)  # the lag's metric
            self._recorded = time.time()

    def _holds_all(self, archiver: Archiver) -> bool:
        """Whether the archive has every byte the master has logged."""
        try:
            with self.control.mysql(archiver.address) as server:
                [status] = server.query("SHOW MASTER STATUS")
        except (ShardStoreError, ValueError):
            return False
        mine = [(int(created), n) for name, n in archiver.put.items() for file, _, created in [name.rpartition("@")] if file == str(status["File"])]  # fmt: skip
        return bool(mine) and max(mine)[1] >= int(status["Position"])  # its newest begun

    def _archiver(self, name: str, address: str) -> Archiver:
        with self.control.mysql(address) as server:  # the operator's login
            login = (server.user, server.password)
        return Archiver(self.store, host=name, address=address, login=login, spool=self.spool / name, binary_logs=lambda: binary_logs(self.control.mysql, address), say=self.say)  # fmt: skip

    def _pass(self, archiver: Archiver) -> None:
        try:
            archiver.archive_pass()
        except ShardStoreError as exc:
            self.say(f"{archiver.host}: {exc}")

    def stop(self) -> None:
        for archiver in self.archivers.values():
            archiver.stop()


def keep_archiving(
    control: Control,
    store: BackupStore,
    *,
    spool: Path,
    instance: str,
    interval: float = INTERVAL,
    passes: int | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> None:
    """Archive the masters' binary logs pass after pass while this process holds the lock,
    else wait for it (``passes``: stop after that many, for a test)."""
    done = 0
    while passes is None or done < passes:
        archiving = Archiving(control, store, spool, say)
        try:
            with control.locks.hold([ARCHIVING], owner=f"archiver {instance}") as still_held:
                say(f"{instance} archives the masters' binary logs into {store.url}")
                while passes is None or done < passes:
                    still_held()
                    archiving.archive_pass()
                    done += 1
                    time.sleep(interval)
        except HostsBusy:
            done += 1  # another process archives (or ZooKeeper cannot be reached)
            time.sleep(interval)
        except ShardStoreError as exc:
            say(f"{instance} stood down: {exc}")
            time.sleep(interval)
        finally:
            archiving.stop()


def binary_logs(connect: Callable[[str], Any], address: str) -> dict[str, int]:
    """The binary logs of the server at ``address`` now, oldest first, with their sizes."""
    with connect(address) as server:
        return {str(row["Log_name"]): int(row["File_size"]) for row in server.query("SHOW BINARY LOGS")}  # fmt: skip


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
        binary_logs: Callable[[], dict[str, int]],
        say: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.store, self.host, self.address, self.login = store, host, address, login
        self.spool = spool
        self.binary_logs = binary_logs  # the master's binary logs now, oldest first: their sizes
        self.say = say
        self._reader: subprocess.Popen[bytes] | None = None
        self._scratch = tempfile.TemporaryDirectory(prefix="pinboard-archiver-")  # its login
        self.put: dict[str, int] = {}  # FILE@CREATED -> how many of its bytes the store holds
        self._started: set[str] = set()  # the files whose ``starts`` the store holds
        self._said = ""  # the log the reader was last said to start from

    def run(self, *, interval: float = INTERVAL, until: Callable[[], bool] = lambda: False) -> None:  # fmt: skip
        """Archive pass after pass, until ``until()`` says stop."""
        try:
            while not until():
                self.archive_pass()
                time.sleep(interval)
        finally:
            self.stop()

    def archive_pass(self) -> list[str]:
        """Put what grew since the last pass; (re)start the reader if it is not running
        (the master was down, say). What was put."""
        self.spool.mkdir(parents=True, exist_ok=True)
        put = self._put_grown()
        if self._begun_again():
            self.stop_reading()
            for path in self.spool.iterdir():  # put already, the log it continued is gone
                path.unlink()
            self.say(f"{self.host}'s binary log was begun again (RESET MASTER, a rebuild): archived apart")  # fmt: skip
        if self._reader is None or self._reader.poll() is not None:
            self._start_reader()
        return put

    def _begun_again(self) -> bool:
        """Whether the master's binary log was reset under the reader: the log it spools
        is gone, or shorter on the master than in the spool."""
        spooled = sorted(self.spool.iterdir(), key=lambda p: log_number(p.name))
        if not spooled:
            return False
        try:
            present = self.binary_logs()
        except ShardStoreError:
            return False
        size = present.get(spooled[-1].name)
        return size is None or size < spooled[-1].stat().st_size

    def _put_grown(self) -> list[str]:
        """Put each spooled log's bytes beyond those the store holds as a piece; a log the
        master has gone on from is closed and leaves the spool. The keys put."""
        files = sorted(self.spool.iterdir(), key=lambda p: log_number(p.name))
        put = []
        for path in files:
            created = _created(path)
            if created is None:
                continue  # its first event is not in the spool yet
            # The same name, begun again after a reset, is another log.
            name = f"{path.name}@{created}"
            base = f"{PREFIX}/{self.host}/{name}"
            if name not in self.put:  # (a restarted archiver: what the store has of it)
                kept = next((log for log in archived(self.store, self.host) if log.file == path.name and log.created == created), None)  # fmt: skip
                self.put[name] = kept.size if kept else 0
                if kept is not None:
                    self._started.add(name)
            if name not in self._started and (starts := _starts(path, closed=path != files[-1])) is not None:  # fmt: skip
                self.store.put(f"{base}/starts", starts.encode())
                self._started.add(name)
            offset = self.put[name]
            with path.open("rb") as log:  # what grew only: a log may be hundreds of MB
                log.seek(offset)
                chunk = log.read()
            if chunk:
                key = f"{base}/{offset:015d}-{len(chunk)}.{hashlib.sha256(chunk).hexdigest()}"
                self.store.put(key, chunk)
                self.put[name] = offset + len(chunk)
                put.append(key)
            if path != files[-1]:  # the master writes the next one: this one is whole
                data = path.read_bytes()
                whole = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                self.store.put(f"{base}/closed", json.dumps(whole).encode())
                path.unlink()
                self._started.discard(name)
                put.append(f"{base}/closed")
        return put

    def _start_reader(self) -> None:
        spooled = sorted((p.name for p in self.spool.iterdir()), key=log_number)
        logs = archived(self.store, self.host)
        if spooled:
            start = spooled[-1]
        elif logs and logs[-1].closed is None:
            start = logs[-1].file
        elif logs:
            start = next_log(logs[-1].file)
        else:
            start = ""
        try:
            present = self.binary_logs()
        except ShardStoreError:
            return  # the master does not answer: the next pass asks again
        if not present:
            return
        if start not in present and not spooled:  # none archived yet, or reset or purged since
            start = next(iter(present))
        server, port = endpoint(self.address)
        options = login_file(self.login, Path(self._scratch.name))
        self._reader = subprocess.Popen(
            ["mariadb-binlog", f"--defaults-extra-file={options}", "--read-from-remote-server",
             "--raw", "--stop-never", f"--stop-never-slave-server-id={_server_id(self.host)}",
             f"--host={server}", f"--port={port}", f"--result-file={self.spool}/", start],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        if start != self._said:  # a master that is down is asked again each pass: said once
            self.say(f"archiving {self.host}'s binary logs from {start}")
            self._said = start

    def stop(self) -> None:
        self.stop_reading()
        self._scratch.cleanup()

    def stop_reading(self) -> None:
        if self._reader is not None and self._reader.poll() is None:
            self._reader.terminate()
            self._reader.wait(10)


def _starts(path: Path, *, closed: bool) -> str | None:
    """The GTID state a log starts at: its ``Gtid list`` event, near its head. An empty one
    is the first log of a binary log begun afresh, though the server's data may hold a
    copy's history (a rebuild): then it is the state just before the log's first
    transaction in each domain, so that a backup older than that copy is never taken for
    covered. None while the spool does not hold enough of it yet."""
    listed: str | None = None
    first: dict[int, str] = {}
    with subprocess.Popen(["mariadb-binlog", str(path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as reader:  # fmt: skip
        assert reader.stdout is not None
        for line in reader.stdout:
            if listed is None and (match := _GTID_LIST.search(line)):
                listed = match.group(1)
                if listed:
                    break
            elif listed == "" and (match := _GTID.search(line)):
                domain, server, sequence = (int(n) for n in match.group(1).split("-"))
                first.setdefault(domain, f"{domain}-{server}-{sequence - 1}")
        reader.kill()
    if listed or listed is None:
        return listed
    if first:
        return ",".join(first[d] for d in sorted(first))
    return "" if closed else None  # no transaction yet: asked again at the next pass


def _created(path: Path) -> int | None:
    """When the master began the log: the time of its first event (after the 4-byte magic
    number); None while the spool does not hold it."""
    with path.open("rb") as log:
        head = log.read(8)
    return int.from_bytes(head[4:8], "little") if len(head) == 8 else None


def _server_id(host: str) -> int:
    """The archiver's server id as the master's replica: one per host archived, apart from
    the fleet's (which are small), so a second archiver of the host takes the first's place."""
    return 4_000_000_000 + zlib.crc32(host.encode()) % 200_000_000
