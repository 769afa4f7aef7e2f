"""A master's binary logs archived as they are written, on real MariaDB: after the master is
lost (``kill -9``), its newest backup restored and the archive replayed onto it brings it
back as of any second (the last transaction committed at or before it), or to its last
archived write; a log missing from the chain or corrupt is refused before anything is
applied. The archiver follows the map: a replica that becomes master is archived from then
on, and a backup from before a failover is brought forward by the new master's archive."""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path

import pytest

from shardstore.backups.archiving import Archiver, Archiving, binary_logs
from shardstore.backups.binlogs import ArchivedLog, Piece, archived, chain, gtid_state, replay
from shardstore.backups.physical import BackupError, take, unpack
from shardstore.backups.scratch import PointInTime
from shardstore.backups.store import DirectoryStore
from shardstore.control import backup_records
from shardstore.control.context import Control
from shardstore.control.failover import plan_failover
from shardstore.control.locks import FileLocks
from shardstore.control.plans import MemoryJournal
from shardstore.ids import decompose
from tests.conftest import unavailable
from toolkit.servers.base import _PREPARED
from toolkit.servers.mariadb import MariaDBServer

from .replication import SERVER_OPTIONS, app_store, root, sharded_pair
from .test_backups import host  # noqa: F401 - the fixture
from .test_split import execute

LOGIN = ("root", "")


@pytest.fixture
def master(host: MariaDBServer) -> MariaDBServer:  # noqa: F811 - the fixture imported above
    """test_backups' host (a shard database, a few rows, its binary log on), to archive."""
    if shutil.which("mariadb-binlog") is None:
        unavailable("mariadb-backup", "mariadb-binlog is needed (Debian: mariadb-client)")
    return host


def write(server: MariaDBServer, *rows: int) -> None:
    with root(f"mysql://{server.address}") as db:
        for n in rows:
            db.query("INSERT INTO db00001.notes VALUES (%s, %s)", (n, f"n{n}"))


def notes(server: MariaDBServer) -> list[int]:
    with root(f"mysql://{server.address}") as db:
        return [int(r["local_id"]) for r in db.query("SELECT local_id FROM db00001.notes ORDER BY 1")]  # fmt: skip


def archiving(store: DirectoryStore, master: MariaDBServer, spool: Path) -> Archiver:
    """An archiver of ``master`` (as host A), begun: its first pass made."""
    address = f"mysql://{master.address}"
    archiver = Archiver(store, host="A", address=address, login=LOGIN, spool=spool, binary_logs=lambda: binary_logs(root, address))  # fmt: skip
    archiver.archive_pass()
    return archiver


def archive_until_caught_up(archiver: Archiver, server: MariaDBServer) -> None:
    """Passes until the archive holds everything the master has logged."""
    with root(f"mysql://{server.address}") as db:
        logged = {str(r["Log_name"]): int(r["File_size"]) for r in db.query("SHOW BINARY LOGS")}
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        archiver.archive_pass()
        have = {log.file: log.size for log in archived(archiver.store, archiver.host)}
        if all(have.get(name) == size for name, size in logged.items()):
            return
        time.sleep(0.2)
    raise AssertionError(f"the archive {have} never caught up with {logged}")


def test_a_lost_master_comes_back_as_of_any_second(master: MariaDBServer, tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "backups")
    address = f"mysql://{master.address}"
    archiver = archiving(store, master, tmp_path / "spool")
    made = take(store, host="A", address=address, login=LOGIN, ranges="0-3")
    write(master, 3)
    with root(address) as db:
        db.query("FLUSH BINARY LOGS")  # the chain has a closed log and an open one
    write(master, 4)
    wanted = int(time.time())  # "as of this second": 3 and 4, committed at or before it
    time.sleep(wanted + 1.05 - time.time())
    write(master, 5)
    archive_until_caught_up(archiver, master)
    archiver.stop()
    kept = set(store.keys("binlogs/A/"))
    again = Archiver(store, host="A", address=address, login=LOGIN, spool=tmp_path / "again", binary_logs=lambda: binary_logs(root, address))  # fmt: skip
    for _ in range(3):  # started again: it takes up after the bytes the store holds
        again.archive_pass()
        time.sleep(0.5)
    again.stop()
    assert kept <= set(store.keys("binlogs/A/"))
    for log in archived(store, "A"):  # nothing put twice: each log's pieces follow each other
        assert log.read(store), log.file
    master.halt(kill=True)
    logs = archived(store, "A")
    assert [log.closed is not None for log in logs] == [True] * (len(logs) - 1) + [False] and len(logs) >= 2  # fmt: skip

    restored = started_from(store, made, tmp_path / "restored")
    try:
        done = replay(store, "A", after=made.gtid, into=f"mysql://{restored.address}", login=LOGIN, to_time=wanted)  # fmt: skip
        assert notes(restored) == [1, 2, 3, 4], done
        with root(f"mysql://{restored.address}") as db:
            reached = db.gtid_binlog_pos()
        replay(store, "A", after=reached, into=f"mysql://{restored.address}", login=LOGIN)
        assert notes(restored) == [1, 2, 3, 4, 5]  # the last write archived
    finally:
        restored.stop()


def test_a_gap_or_a_corrupt_log_is_refused_and_nothing_applied(master: MariaDBServer, tmp_path: Path) -> None:  # fmt: skip
    store = DirectoryStore(tmp_path / "backups")
    address = f"mysql://{master.address}"
    archiver = archiving(store, master, tmp_path / "spool")
    made = take(store, host="A", address=address, login=LOGIN, ranges="0-3")
    for n in (3, 4, 5):
        write(master, n)
        with root(address) as db:
            db.query("FLUSH BINARY LOGS")
    archive_until_caught_up(archiver, master)
    archiver.stop()
    logs = archived(store, "A")
    restored = started_from(store, made, tmp_path / "restored")
    try:
        into = f"mysql://{restored.address}"
        damaged = tmp_path / "backups" / logs[-2].pieces[-1].key
        damaged.write_bytes(damaged.read_bytes()[:-1] + b"x")
        with pytest.raises(BackupError, match=f"{logs[-2].file}@.* does not match its sha256"):
            replay(store, "A", after=made.gtid, into=into, login=LOGIN)
        gone = logs[-2]  # from the chain
        shutil.rmtree(tmp_path / "backups" / "binlogs" / "A" / f"{gone.file}@{gone.created}")
        with pytest.raises(BackupError, match=f"have a gap after {logs[-3].file}: {logs[-1].file} follows"):  # fmt: skip
            replay(store, "A", after=made.gtid, into=into, login=LOGIN)
        assert notes(restored) == [1, 2]  # nothing applied
        gone = logs[0]  # the backup's own log
        shutil.rmtree(tmp_path / "backups" / "binlogs" / "A" / f"{gone.file}@{gone.created}")
        with pytest.raises(BackupError, match=f"begin at .* \\({logs[1].file}\\), after {made.gtid}: the transactions between are missing"):  # fmt: skip
            replay(store, "A", after=made.gtid, into=into, login=LOGIN)
        assert notes(restored) == [1, 2]
    finally:
        restored.stop()


def started_from(store: DirectoryStore, made: object, home: Path) -> MariaDBServer:
    """A new server (binary log on, another server id) on the backup's data directory."""
    from shardstore.backups.manifest import Manifest

    assert isinstance(made, Manifest)
    unpack(store, made, home / "data")
    (home / _PREPARED).touch()
    return MariaDBServer([*SERVER_OPTIONS, "--server-id=9"], home=home).start()


def test_the_archiver_follows_the_masters_of_the_map(pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path) -> None:  # fmt: skip
    if shutil.which("mariadb-binlog") is None:
        unavailable("mariadb-backup", "mariadb-binlog is needed (Debian: mariadb-client)")
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    store = DirectoryStore(tmp_path / "backups")
    control = Control(source, no_store, no_store, MemoryJournal(), FileLocks(tmp_path / "locks"), "ada", mysql=root)  # fmt: skip
    said: list[str] = []
    archiving = Archiving(control, store, tmp_path / "spool", said.append)
    archiving.record_every = 0  # each pass records how far each master's archive has come
    try:
        for _ in range(3):
            archiving.archive_pass()
            time.sleep(0.3)
        assert set(archiving.archivers) == {"A"} and archived(store, "A")
        assert archived(store, "B") == []  # a replica's logs are not archived
        made = take(store, host="B", address=f"mysql://{replica.address}", login=LOGIN, ranges="0-3")  # fmt: skip
        execute(plan_failover(source, host="A", author="ada", connect=root), tmp_path)
        store_b = app_store(source)
        on_b = store_b.objects("note").create(1, {"n": "on B"})
        store_b.close()
        with root(f"mysql://{replica.address}") as b:
            logged = {str(r["Log_name"]): int(r["File_size"]) for r in b.query("SHOW BINARY LOGS")}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and {log.file: log.size for log in archived(store, "B")} != logged:  # fmt: skip
            archiving.archive_pass()
            time.sleep(0.2)
        assert {log.file: log.size for log in archived(store, "B")} == logged
        assert set(archiving.archivers) == {"B"}
        archiving.archive_pass()
        caught_up = backup_records.status(source).archived
        assert time.time() - caught_up["B"] < 5 and caught_up["A"] < caught_up["B"]
        assert "A is no longer a master: its archiving stops" in said
    finally:
        archiving.stop()
    # The range's backup from before the failover and its new master's archive (B's binary
    # log holds what it replicated as A's replica too) bring back the write made on B.
    restored = PointInTime(store, made, "B", to_time=None, to_gtid=None)
    try:
        with restored.server().connect() as copy:
            assert copy.value("SELECT COUNT(*) FROM db00001.notes WHERE local_id = %s", (decompose(on_b).local_id,)) == 1  # fmt: skip
    finally:
        restored.drop()


def no_store(*_: object) -> object:
    raise AssertionError("archiving opens no store")


def test_a_log_with_bytes_missing_is_refused(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    pieces = [Piece(offset, len(chunk), hashlib.sha256(chunk).hexdigest(), f"binlogs/A/a-bin.000001/{offset:015d}") for offset, chunk in ((0, b"head"), (10, b"tail"))]  # fmt: skip
    store.put(pieces[0].key, b"head")
    store.put(pieces[1].key, b"tail")
    log = ArchivedLog("A", "a-bin.000001", 1, tuple(pieces), "", None)
    with pytest.raises(BackupError, match="lacks bytes 4 to 10: the archive is corrupt"):
        log.read(store)
    assert ArchivedLog("A", "a-bin.000001", 1, (pieces[0],), "", None).read(store) == b"head"
    closed = {"size": 4, "sha256": hashlib.sha256(b"heaD").hexdigest()}
    with pytest.raises(BackupError, match="is not whole"):
        ArchivedLog("A", "a-bin.000001", 1, (pieces[0],), "", closed).read(store)


def test_a_master_whose_binary_log_began_again_is_archived_apart(master: MariaDBServer, tmp_path: Path) -> None:  # fmt: skip
    """A rebuild resets a host's binary log: its logs are named again from the first, and
    its history before them is a copy's, in no log. The new logs are never spliced onto the
    old ones of the same name, and a backup older than the copy is refused, not replayed
    with a hole."""
    store = DirectoryStore(tmp_path / "backups")
    address = f"mysql://{master.address}"
    archiver = archiving(store, master, tmp_path / "spool")
    write(master, 3)
    made = take(store, host="A", address=address, login=LOGIN, ranges="0-3")
    archive_until_caught_up(archiver, master)
    sequence = gtid_state(made.gtid)[0]
    time.sleep(1.1)  # (a log's name and the second it began tell it apart)
    with root(address) as db:  # as a rebuild's copy: the log begun again, a copy's GTIDs on
        db.query("RESET MASTER")
        db.query("SET SESSION gtid_seq_no = %s", (sequence + 5,))
        db.query("INSERT INTO db00001.notes VALUES (4, 'after the copy')")
    archive_until_caught_up(archiver, master)
    archiver.stop()
    first = [log for log in archived(store, "A") if log.number == 1]
    assert len(first) == 2 and first[0].created < first[1].created, first  # two logs, kept apart
    assert first[1].starts == f"0-1-{sequence + 4}"  # the state before its first transaction
    with pytest.raises(BackupError, match="the transactions between are missing"):
        chain(store, "A", made.gtid)  # 0-1-(sequence+1..+4) are in no log
    assert chain(store, "A", f"0-1-{sequence + 4}") == [first[1]]
