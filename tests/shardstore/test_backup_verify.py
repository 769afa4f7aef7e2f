"""``shardstore backup verify`` on real MariaDB: a range's newest backup restored with its
master's archive, caught up from the master without acknowledging its commits and compared
with it, passes on a healthy range; a backup with a corrupt part fails, as does a copy
that differs from its master (a row the master wrote outside its binary log); each outcome
is recorded for the metrics."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from shardstore.backups.manifest import manifests
from shardstore.backups.physical import take
from shardstore.backups.store import DirectoryStore
from shardstore.control import backup_records
from tests.conftest import unavailable
from toolkit.servers.mariadb import MariaDBServer

from .replication import REPLICATION, app_store, root, sharded_pair
from .test_binlog_archive import LOGIN, archive_until_caught_up, archiving
from .test_reopen import cli


def test_a_backup_is_verified_against_its_master_and_a_bad_one_fails(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("mariadb-backup") is None or shutil.which("mariadb-binlog") is None:
        unavailable("mariadb-backup", "mariadb-backup and mariadb-binlog are needed (Debian: mariadb-backup, mariadb-client)")  # fmt: skip
    monkeypatch.setenv("SHARDSTORE_MYSQL_REPLICATION", REPLICATION)
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    backups = DirectoryStore(tmp_path / "backups")
    archiver = archiving(backups, master, tmp_path / "spool")
    store = app_store(source)
    written = [store.objects("note").create(n % 4, {"n": n}) for n in range(4)]
    take(backups, host="B", address=f"mysql://{replica.address}", login=LOGIN, ranges="0-3")
    written += [store.objects("note").create(n % 4, {"n": n}) for n in range(4, 8)]
    store.close()
    archive_until_caught_up(archiver, master)
    archiver.stop()
    url = f"file://{tmp_path / 'backups'}"

    status, said = cli(tmp_path, "backup", "verify", "0-3", "--store", url)
    assert status == 0 and said.startswith("verified: range 0-3, backup B/"), said
    assert "the backup" in said and "differ" not in said
    assert backup_records.status(source).verified["0-3"]["ok"] is True
    with root(f"mysql://{master.address}") as m:
        assert m.semi_sync().replicas == 1  # the check never acknowledged: B alone does
    status, said = cli(tmp_path, "backup", "verify", "--all", "--store", url)
    assert (status, said) == (0, "")  # verified lately, and well: a second host skips it

    with root(f"mysql://{master.address}") as m:  # a row no replica or archive ever sees
        m.query("SET SESSION sql_log_bin = 0")
        m.query("INSERT INTO db00002.notes (data) VALUES ('{}')")
    status, said = cli(tmp_path, "backup", "verify", "0-3", "--store", url)
    assert status == 1 and said.startswith("VERIFICATION FAILED: range 0-3"), said
    assert backup_records.status(source).verified["0-3"]["ok"] is False
    status, said = cli(tmp_path, "backup", "verify", "--all", "--store", url)
    assert status == 1 and said.startswith("VERIFICATION FAILED: range 0-3")  # failed: again

    [made] = manifests(backups)
    damaged = tmp_path / "backups" / made.parts[0].key
    damaged.write_bytes(b"x" + damaged.read_bytes()[1:])
    status, said = cli(tmp_path, "backup", "verify", "0-3", "--store", url)
    assert status == 1 and "does not match its manifest's sha256: the backup is corrupt" in said, (
        said
    )
    status, said = cli(tmp_path, "backup", "verify", "4-7", "--store", url)
    assert status != 0 and "the shard map has no range 4-7" in said
