"""``shardstore restore`` on real MariaDB: a range whose master and replica are both killed
comes back onto new hosts from its replica's backup and the master's archived binary
logs, as of a second: the writes committed by then readable, the later ones not, the new
master taking writes acknowledged by the new replica. A run killed part way leaves the
live map untouched, and is aborted, or resumed (its scratch server made again). Refused, with nothing changed: a
range that still answers, a host that serves a range, a time in the future or before the
oldest backup. One shard restored as of a second beside the live one: compared with it by
object ID, and the rows a bad DELETE took written back, the later writes untouched."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from shardstore.backups.physical import take
from shardstore.backups.store import DirectoryStore
from shardstore.control import recovery
from shardstore.control.cli_restore import target
from shardstore.control.config_source import ConfigError
from shardstore.control.file_source import FileSource
from shardstore.control.locks import FileLocks
from shardstore.control.plans import MemoryJournal, Outcome, Plan, run
from shardstore.control.restore import plan_restore
from shardstore.control.restore_shard import plan_restore_shard
from shardstore.exceptions import InvalidTopology
from shardstore.ids import compose, decompose
from shardstore.replicas import replicas_of
from tests.conftest import unavailable
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CATALOG
from .replication import app_store, replicating, root, running, sharded_pair
from .test_binlog_archive import LOGIN, archive_until_caught_up, archiving
from .test_failover import die_after


def test_a_lost_range_is_restored_onto_new_hosts_as_of_a_second(tmp_path: Path) -> None:
    if shutil.which("mariadb-backup") is None or shutil.which("mariadb-binlog") is None:
        unavailable("mariadb-backup", "mariadb-backup and mariadb-binlog are needed (Debian: mariadb-backup, mariadb-client)")  # fmt: skip
    with running(4) as (master, replica, c, d):
        restored_as_of_a_second(master, replica, c, d, tmp_path=tmp_path)


def restored_as_of_a_second(
    master: MariaDBServer, replica: MariaDBServer, c: MariaDBServer, d: MariaDBServer, *, tmp_path: Path
) -> None:  # fmt: skip
    replicating(master, replica)
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    current = source.current("shards").document
    hosts = {**current["hosts"], "C": f"mysql://{c.address}", "D": f"mysql://{d.address}"}
    source.publish("shards", {**current, "hosts": hosts}, author="setup", reason="two new hosts")
    backups = DirectoryStore(tmp_path / "backups")
    archiver = archiving(backups, master, tmp_path / "spool")

    store = app_store(source)
    notes = store.objects("note")
    backed_up = [notes.create(n % 4, {"n": n}) for n in range(4)]
    take(backups, host="B", address=f"mysql://{replica.address}", login=LOGIN, ranges="0-3")
    kept = [notes.create(n % 4, {"n": n}) for n in range(4, 8)]
    wanted = int(time.time())  # as of this second: the first eight
    time.sleep(wanted + 1.05 - time.time())
    later = [notes.create(n % 4, {"n": n}) for n in range(8, 12)]
    store.close()
    archive_until_caught_up(archiver, master)
    archiver.stop()

    def refused(match: str, **options: object) -> None:
        with pytest.raises(InvalidTopology, match=match):
            plan_restore(source, backups, **{"span": [0, 3], "onto": ["C", "D"], "author": "ada", "to_time": wanted, "connect": root, **options})  # type: ignore[arg-type]  # fmt: skip

    refused("A, a host of range 0-3, answers: a restore replaces a range whose every host is lost")
    master.halt(kill=True)
    replica.halt(kill=True)
    refused("no range 0-2", span=[0, 2])
    refused("A serves shards 0-3: a restore goes onto hosts that serve no range", onto=["A"])
    refused("is in the future", to_time=time.time() + 3600)
    refused("is before the oldest backup of range 0-3", to_time=wanted - 3600)
    before = source.current("shards").version

    def planned() -> Plan:
        return plan_restore(source, backups, span=[0, 3], onto=["C", "D"], author="ada", to_time=wanted, connect=root)  # fmt: skip

    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")
    dead = planned()
    assert source.current("shards").version == before  # planning changes nothing
    die_after(dead, 2, journal)  # killed once the scratch server was made and C copied
    dead.steps[-1].run()  # its scratch server dies with it
    [left] = journal.open_operations()
    again = recovery.plan_again(left, source, author="bob", connect=root)
    assert recovery.abort(left, again, journal=journal, locks=locks, operator="bob").startswith("aborted by bob after step 2")  # fmt: skip
    assert source.current("shards").version == before  # the live map untouched

    dead = planned()
    die_after(dead, 3, journal)  # C and D copied, this time
    dead.steps[-1].run()
    [left] = journal.open_operations()
    again = recovery.plan_again(left, source, author="bob", connect=root)
    done = recovery.resume(left, again, journal=journal, locks=locks, operator="bob")
    assert done == "resumed by bob after step 3: 6 steps done", done
    document = source.current("shards").document
    [entry] = document["ranges"]
    assert (entry["master"], replicas_of(entry)) == ("C", ["D"])
    assert sorted(document["out_of_service"]) == ["A", "B"]

    store = app_store(source)
    notes = store.objects("note")
    found = {obj["n"] for obj in notes.get_many(backed_up + kept + later)}
    assert found == set(range(8)), found  # the later four were committed after the target
    after = notes.create(2, {"n": "after the restore"})  # acknowledged by D
    assert notes.get(after)["n"] == "after the restore"  # type: ignore[index]
    store.close()
    with root(f"mysql://{d.address}") as r, root(f"mysql://{c.address}") as m:
        assert r.wait_for(m.gtid_binlog_pos(), 30)
        status = r.replica_status()
        assert status is not None and status.healthy and r.acknowledges()
    assert isinstance(source, FileSource)


def test_the_target_of_a_restore_is_a_time_a_gtid_or_latest() -> None:
    assert target("latest") == (None, None)
    assert target("0-1-42,7-3-2") == (None, "0-1-42,7-3-2")
    assert target("2026-11-29T08:30:00Z") == (1795941000.0, None)
    assert target("2026-11-29 08:30:00") == (1795941000.0, None)
    for bad in ("yesterday", "0-1", "2026-13-01T00:00:00Z", ""):
        with pytest.raises(ConfigError, match=r"a time .*, a GTID .*, or latest"):
            target(bad)


def test_a_shard_as_of_a_second_is_compared_with_the_live_one_and_its_deleted_rows_copied_back(
    tmp_path: Path,
) -> None:
    if shutil.which("mariadb-backup") is None or shutil.which("mariadb-binlog") is None:
        unavailable("mariadb-backup", "mariadb-backup and mariadb-binlog are needed (Debian: mariadb-backup, mariadb-client)")  # fmt: skip
    with running(3) as (master, replica, spare):
        replicating(master, replica)
        bad_delete_undone(master, replica, spare, tmp_path=tmp_path)


def bad_delete_undone(master: MariaDBServer, replica: MariaDBServer, spare: MariaDBServer, *, tmp_path: Path) -> None:  # fmt: skip
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    current = source.current("shards").document
    hosts = {**current["hosts"], "S": f"mysql://{spare.address}"}
    source.publish("shards", {**current, "hosts": hosts}, author="setup", reason="a spare")
    backups = DirectoryStore(tmp_path / "backups")
    archiver = archiving(backups, master, tmp_path / "spool")
    store = app_store(source)
    notes, has_notes = store.objects("note"), store.mapping("account_has_notes")
    account = compose(1, CATALOG.type("account").type_id, 1)
    mine = [notes.create(1, {"n": n}) for n in range(3)]
    for sequence, note in enumerate(mine):
        has_notes.add(account, note, sequence=sequence)
    other = notes.create(2, {"n": "shard 2"})
    take(backups, host="B", address=f"mysql://{replica.address}", login=LOGIN, ranges="0-3")
    after_backup = notes.create(1, {"n": "after the backup"})
    wanted = int(time.time())
    time.sleep(wanted + 1.05 - time.time())
    with root(f"mysql://{master.address}") as m:  # the bug: two notes and their mapping rows
        doomed = [decompose(n).local_id for n in mine[:2]]
        m.query("DELETE FROM db00001.notes WHERE local_id IN (%s, %s)", tuple(doomed))
        m.query("DELETE FROM db00001.account_has_notes WHERE to_id IN (%s, %s)", tuple(mine[:2]))
    later = notes.create(1, {"n": "after the bug"})
    notes.update(other, {"n": "shard 2, changed later"})
    archive_until_caught_up(archiver, master)
    archiver.stop()
    types = {t.table: t.type_id for t in CATALOG.types.values()}

    def restoring(copy_back: bool) -> list[str]:
        plan = plan_restore_shard(source, backups, shard=1, to_time=wanted, into="S", author="ada", copy_rows_back=copy_back, types=types, connect=root)  # fmt: skip
        return run_plan(plan, tmp_path).notes

    said = restoring(copy_back=False)
    compared = said[2]
    assert "notes: 2 missing (deleted since), 1 added since, 0 changed" in compared, compared
    assert f"missing: {mine[0]}, {mine[1]}" in compared and f"added: {later}" in compared
    assert "account_has_notes: 2 missing (deleted since), 0 added since, 0 changed" in compared
    assert {o["n"] for o in notes.get_many([*mine, after_backup, later])} == {2, "after the backup", "after the bug"}  # fmt: skip
    with root(f"mysql://{spare.address}") as s:  # the copy, as it was, beside the live one
        assert s.value("SELECT COUNT(*) FROM db00001.notes") == 4

    said = restoring(copy_back=True)
    assert said[3] == "4 rows written back into db00001 on A", said
    assert [o["n"] for o in notes.get_many([*mine, after_backup, later, other])] == [0, 1, 2, "after the backup", "after the bug", "shard 2, changed later"]  # fmt: skip
    assert sorted(has_notes.page(account).ids) == sorted(mine)
    store.close()
    with root(f"mysql://{replica.address}") as r, root(f"mysql://{master.address}") as m:
        assert r.wait_for(m.gtid_binlog_pos(), 30)
        assert r.value("SELECT COUNT(*) FROM db00001.notes") == 5  # written back, replicated

    with pytest.raises(InvalidTopology, match="A serves shards 0-3: a shard is restored beside the live one"):  # fmt: skip
        plan_restore_shard(source, backups, shard=1, to_time=wanted, into="A", author="ada", connect=root)  # fmt: skip
    with pytest.raises(InvalidTopology, match="no range of the shard map holds shard 9"):
        plan_restore_shard(source, backups, shard=9, to_time=wanted, into="S", author="ada", connect=root)  # fmt: skip


def run_plan(plan: Plan, tmp_path: Path) -> Outcome:
    outcome = run(
        plan, journal=MemoryJournal(), locks=FileLocks(tmp_path / "locks"), operator="ada"
    )
    assert outcome.ok, outcome.error
    return outcome
