"""Physical backups of a real MariaDB host (mariadb-backup, zstd) into a directory and into
an S3 API server (moto's, over HTTP): the manifest names the GTID position and each part's
sha256, a backup unpacked into an empty directory starts as a server with the rows it
held, and a corrupt part is refused before anything is extracted."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from shardstore.backups.manifest import manifests
from shardstore.backups.physical import BackupError, take, unpack
from shardstore.backups.store import (  # fmt: skip
    BackupStore,
    BackupStoreError,
    DirectoryStore,
    S3Store,
    open_store,
)
from tests.aws_server import AwsServer
from tests.conftest import unavailable
from toolkit.servers.base import _PREPARED
from toolkit.servers.mariadb import MariaDBServer

from .replication import root, sharded_pair, start_servers
from .test_reopen import cli


@pytest.fixture
def host() -> Iterator[MariaDBServer]:
    """A server with a shard database and a few rows, its binary log on (GTIDs)."""
    if shutil.which("mariadb-backup") is None or shutil.which("zstd") is None:
        unavailable("mariadb-backup", "mariadb-backup and zstd are needed (Debian: mariadb-backup, zstd)")  # fmt: skip
    [server] = start_servers(1)
    try:
        with root(f"mysql://{server.address}") as db:
            db.set_read_only(False)
            db.query("CREATE DATABASE db00001")
            db.query("CREATE TABLE db00001.notes (local_id INT PRIMARY KEY, data TEXT)")
            db.query("INSERT INTO db00001.notes VALUES (1, 'one'), (2, 'two')")
        yield server
    finally:
        server.stop()


def backed_up(store: BackupStore, host: MariaDBServer, tmp_path: Path) -> list[tuple[int, str]]:
    """Back ``host`` up into ``store``, unpack the newest backup there, start a server on
    it, and read its rows."""
    address = f"mysql://{host.address}"
    with root(address) as db:
        position = db.gtid_binlog_pos()
    made = take(store, host="A", address=address, login=("root", ""), ranges="0-3", part_bytes=64 * 1024)  # fmt: skip
    assert made.gtid == position and made.host == "A" and made.ranges == "0-3"
    assert len(made.parts) > 1 and made.size == sum(p.size for p in made.parts)
    [listed] = manifests(store, "A")
    assert listed == made

    home = tmp_path / "restored"
    unpack(store, listed, home / "data")
    (home / _PREPARED).touch()  # the data directory is the backup's: no install-db
    restored = MariaDBServer(["--skip-log-bin"], home=home).start()
    try:
        with root(f"mysql://{restored.address}") as db:
            rows = db.query("SELECT local_id, data FROM db00001.notes ORDER BY local_id")
            return [(int(row["local_id"]), str(row["data"])) for row in rows]
    finally:
        restored.stop()


def test_a_backup_in_a_directory_restores_and_a_corrupt_part_is_refused(
    host: MariaDBServer, tmp_path: Path
) -> None:
    store = open_store(f"file://{tmp_path / 'backups'}")
    assert isinstance(store, DirectoryStore)
    assert backed_up(store, host, tmp_path) == [(1, "one"), (2, "two")]

    [made] = manifests(store)
    damaged = tmp_path / "backups" / made.parts[1].key
    damaged.write_bytes(b"x" + damaged.read_bytes()[1:])
    target = tmp_path / "again"
    with pytest.raises(BackupError, match=r"part-00001\.mbstream\.zst does not match its manifest's sha256"):  # fmt: skip
        unpack(store, made, target)
    assert not target.exists()  # nothing extracted

    with pytest.raises(BackupStoreError, match="names no backup store"):
        open_store("ftp://nowhere")
    with pytest.raises(BackupStoreError, match="is not a key of"):
        store.get("../outside")


def test_a_backup_in_s3_restores(aws_server: AwsServer, host: MariaDBServer, tmp_path: Path) -> None:  # fmt: skip
    client = boto3.client(
        "s3", endpoint_url=aws_server.url, region_name="eu-west-1",
        aws_access_key_id="test", aws_secret_access_key="test",
    )  # fmt: skip
    client.create_bucket(Bucket="backups", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})  # fmt: skip
    store = S3Store("backups", "staging", client)
    assert backed_up(store, host, tmp_path) == [(1, "one"), (2, "two")]
    keys = [item["Key"] for item in client.list_objects_v2(Bucket="backups")["Contents"]]
    [made] = manifests(store)
    assert sorted(keys) == sorted([f"staging/{made.key}", *(f"staging/{p.key}" for p in made.parts)])  # fmt: skip


def test_a_range_is_backed_up_from_its_replica_by_the_command(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    if shutil.which("mariadb-backup") is None:
        unavailable("mariadb-backup", "mariadb-backup is needed (Debian: mariadb-backup)")
    master, replica = pair
    sharded_pair(master, replica, tmp_path=tmp_path)
    store = f"file://{tmp_path / 'backups'}"
    status, said = cli(tmp_path, "backup", "take", "0-3", "--store", store)
    assert status == 0, said
    assert said.startswith(f"backing B (shards 0-3) up into {store}\n")
    status, listed = cli(tmp_path, "backup", "list", "--store", store)
    [made] = manifests(DirectoryStore(tmp_path / "backups"))
    with root(f"mysql://{replica.address}") as r:
        assert made.host == "B" and made.gtid == r.gtid_binlog_pos()  # the replica's, not A's
    assert status == 0 and listed.startswith(f"B/{made.name}  ") and "shards 0-3" in listed

    status, said = cli(tmp_path, "backup", "take", "nosuch", "--store", store)
    assert status != 0 and "no host nosuch in the shard map" in said


def test_a_timer_on_every_shard_host_backs_up_the_replicas_only(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("mariadb-backup") is None:
        unavailable("mariadb-backup", "mariadb-backup is needed (Debian: mariadb-backup)")
    master, replica = pair
    sharded_pair(master, replica, tmp_path=tmp_path)
    monkeypatch.setenv("SHARDSTORE_BACKUP_STORE", f"file://{tmp_path / 'backups'}")  # no --store
    status, said = cli(tmp_path, "backup", "take", "A", "--replica-only")
    assert status == 0 and said == "A masters shards 0-3: not backed up (--replica-only)\n"
    status, said = cli(tmp_path, "backup", "take", "B", "--replica-only")
    assert status == 0 and said.startswith("backing B (shards 0-3) up into file://")
    assert [m.host for m in manifests(DirectoryStore(tmp_path / "backups"))] == ["B"]
    status, said = cli(tmp_path, "backup", "verify")
    assert status != 0 and "name a range FIRST-LAST, or --all" in said


def test_the_timer_takes_a_range_s_backup_when_due_or_asked_for_once(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``take HOST --replica-only --if-due HOURS``, as every shard host runs it often: the
    range's replica backs it up when it has no backup, and again once one is asked for
    (``backup request``, the console's *Back up now*), not otherwise."""
    if shutil.which("mariadb-backup") is None:
        unavailable("mariadb-backup", "mariadb-backup is needed (Debian: mariadb-backup)")
    master, replica = pair
    sharded_pair(master, replica, tmp_path=tmp_path)
    monkeypatch.setenv("SHARDSTORE_BACKUP_STORE", f"file://{tmp_path / 'backups'}")
    store = DirectoryStore(tmp_path / "backups")
    timer = ("backup", "take", "B", "--replica-only", "--if-due", "24")
    status, said = cli(tmp_path, *timer)
    assert status == 0 and said.startswith("B: a backup is due: range 0-3: it has no backup\n")
    status, said = cli(tmp_path, *timer)
    assert status == 0 and said == "B: no backup due (--if-due 24)\n"
    assert len(manifests(store)) == 1

    status, said = cli(tmp_path, "backup", "request", "0-3")
    assert status == 0 and "a backup of range 0-3 asked for" in said, said
    status, said = cli(tmp_path, "backup", "take", "A", "--replica-only", "--if-due", "24")
    assert status == 0 and "not backed up (--replica-only)" in said  # the master never
    status, said = cli(tmp_path, *timer)
    assert status == 0 and " asked for one\n" in said and "backing B (shards 0-3)" in said
    status, said = cli(tmp_path, *timer)
    assert status == 0 and said == "B: no backup due (--if-due 24)\n"
    assert len(manifests(store)) == 2

    status, said = cli(tmp_path, "backup", "request", "4-7")
    assert status != 0 and "no range 4-7 in the shard map" in said
