"""A replica rebuilt from the newest backup and the archive, on real MariaDB (as Pinterest
builds every new host): the copy comes from a scratch server, the master serves no snapshot
(its BACKUP STAGE count unchanged), only its binary log from the backup's position on; the
new replica follows it, compared clean, acknowledging. A backup older than a day and a bit,
or one the archive does not continue, is not used: the live copy is the fallback."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from shardstore.backups.physical import take
from shardstore.backups.store import DirectoryStore
from shardstore.control.mysql_hosts import MySQLHost
from shardstore.control.rebuild import plan_rebuild
from shardstore.control.replica_copy import FRESH_SECONDS, fresh_backup
from shardstore.replicas import replicas_of
from tests.conftest import unavailable

from .replication import app_store, replicating, root, running, sharded_pair
from .test_binlog_archive import LOGIN, archive_until_caught_up, archiving
from .test_guard_replacement import acknowledges, with_spare
from .test_split import execute


def test_a_replica_is_rebuilt_from_the_newest_backup_with_no_snapshot_of_the_master(tmp_path: Path) -> None:  # fmt: skip
    if shutil.which("mariadb-backup") is None or shutil.which("mariadb-binlog") is None:
        unavailable("mariadb-backup", "mariadb-backup and mariadb-binlog are needed (Debian: mariadb-backup, mariadb-client)")  # fmt: skip
    with running(3) as (master, replica, spare):
        replicating(master, replica)
        source = sharded_pair(master, replica, tmp_path=tmp_path)
        with_spare(source, spare)
        backups = DirectoryStore(tmp_path / "backups")
        archiver = archiving(backups, master, tmp_path / "spool")
        store = app_store(source)
        before = [store.objects("note").create(n % 4, {"n": n}) for n in range(4)]
        made = take(backups, host="B", address=f"mysql://{replica.address}", login=LOGIN, ranges="0-3")  # fmt: skip
        after = [store.objects("note").create(n % 4, {"n": n}) for n in range(4, 8)]
        archive_until_caught_up(archiver, master)
        archiver.stop()

        assert fresh_backup(backups, ["0-3"], "A") == made
        assert fresh_backup(backups, ["0-3"], "A", clock=lambda: time.time() + FRESH_SECONDS + 60) is None  # fmt: skip
        assert fresh_backup(backups, ["0-3"], "B") is None  # B's archive does not continue it
        assert fresh_backup(None, ["0-3"], "A") is None

        with root(f"mysql://{master.address}") as m:
            snapshots = _backup_stages(m)
        plan = plan_rebuild(source, host="S", master="A", author="ada", connect=root, store=backups)
        assert f"from backup B/{made.name} and the archive" in plan.text()
        outcome = execute(plan, tmp_path)
        assert any("nothing read from the master" in note for note in outcome.notes), outcome.notes
        with root(f"mysql://{master.address}") as m:
            assert _backup_stages(m) == snapshots  # no snapshot of the master was taken
        assert replicas_of(source.current("shards").document["ranges"][0]) == ["B", "S"]
        assert acknowledges(spare, master)
        store.objects("note").create(1, {"n": "after the rebuild"})
        with root(f"mysql://{spare.address}") as s, root(f"mysql://{master.address}") as m:
            assert s.wait_for(m.gtid_binlog_pos(), 30)
            count = sum(int(s.value(f"SELECT COUNT(*) FROM db0000{n}.notes")) for n in range(4))
        assert count == len(before) + len(after) + 1
        store.close()

        live = plan_rebuild(source, host="S", author="ada", connect=root)  # no store: the master
        assert "one snapshot, throttled" in live.text()
        execute(live, tmp_path)
        with root(f"mysql://{master.address}") as m:
            assert _backup_stages(m) > snapshots  # the live copy held its commits for one


def _backup_stages(m: MySQLHost) -> int:
    """How many BACKUP STAGE statements the server has run (a snapshot copy runs them)."""
    rows = m.query("SHOW GLOBAL STATUS LIKE 'Com_backup'")
    return int(rows[0]["Value"]) if rows else 0
