"""Shard split on real MariaDB replication: the replica takes over half of the host's shards
after a clean diff and a read-only window on those shards only; the shards that left each
host are renamed, not dropped; a revert brings them back with their newest rows; cleanup
drops the copies. Also ``diff`` on its own."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from shardstore import InvalidTopology, ShardReadOnly, Store, Topology, jobs
from shardstore.backups.physical import take
from shardstore.backups.store import DirectoryStore
from shardstore.control import recovery, reverse_stream
from shardstore.control.diff import diff_hosts, plan_diff
from shardstore.control.locks import FileLocks
from shardstore.control.mysql_hosts import MySQLHost
from shardstore.control.plans import MemoryJournal, Outcome, Plan, StepFailed, run
from shardstore.control.split import halves, plan_split
from shardstore.control.split_cleanup import plan_cleanup
from shardstore.control.split_revert import plan_split_revert
from shardstore.jobs import JobError
from tests.conftest import unavailable
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CATALOG
from .replication import APP_LOGIN, app_store, root, sharded_pair, wait_caught_up
from .test_failover import die_after


def execute(plan: Plan, tmp_path: Path) -> Outcome:
    outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path), operator="ada")
    assert outcome.ok, outcome.error
    return outcome


def databases(server: MariaDBServer) -> set[str]:
    with root(f"mysql://{server.address}") as h:
        return {
            str(r["Database"])
            for r in h.query("SHOW DATABASES")
            if str(r["Database"]).startswith("db")
        }


def titles(store: Store, ids: list[int]) -> list[object]:
    return [p["n"] for p in store.objects("note").get_many(ids)]


def test_halves_cut_a_hosts_shards_in_two_by_count() -> None:
    assert halves([{"range": [0, 3]}]) == ([[0, 1]], [[2, 3]])
    assert halves([{"range": [0, 1]}, {"range": [8, 11]}]) == ([[0, 1], [8, 8]], [[9, 11]])
    with pytest.raises(InvalidTopology, match="two shards or more"):
        halves([{"range": [5, 5]}])


def test_the_reverse_streams_filter_names_a_hosts_half_in_a_few_patterns() -> None:
    half = reverse_stream.patterns(list(range(2048, 4096)))
    assert half.startswith("db02048.%,db02049.%,db0205_.%,") and "db03___.%" in half
    assert len(half.split(",")) == 32
    assert reverse_stream.patterns([3, 2, 7]) == "db00002.%,db00003.%,db00007.%"
    assert reverse_stream.patterns([*range(100), 150]) == "db000__.%,db00150.%"


def test_split_revert_and_cleanup(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path, caught_up=False)
    old = app_store(source)
    written = [old.objects("note").create(n % 4, {"n": n}) for n in range(40)]
    wait_caught_up(master, replica)

    plan = plan_split(source, host="A", author="ada", connect=root)
    assert [line.split("  [")[0] for line in plan.lines()] == [
        "1. check B replicates from A and is caught up",
        "2. diff shards 2..3 on A and B (rows, checksums)",
        "3. publish shard map v2: shards 2..3 read-only",
        "4. wait until every process follows shard map v2",
        "5. take the site's writes on shards 2..3 away on A (MySQL grants)",
        "6. wait until B has applied all of A's writes (GTID)",
        "7. stop replication from A to B; B writable",
        "8. replicate shards 2..3 back from B to A (revert_split3)",
        "9. publish shard map v3: shards 2..3 mastered by B",
        "10. rename the shards that stay on A to db*_split3 on B",
    ]
    outcome = execute(plan, tmp_path)
    # 2 shards of 27 tables: the catalog's 24, mapping_counts and the idempotency keys' 2
    assert "identical" in outcome.notes[1] and "54 tables" in outcome.notes[1]

    split = Topology.from_json(source.current("shards").document)
    assert [(r.first, r.last, r.master, r.replicas) for r in split.ranges] == [
        (0, 1, "A", ()),
        (2, 3, "B", ()),
    ]
    assert split.read_only == ()
    assert databases(master) >= {"db00000", "db00001", "db00002", "db00003"}  # A keeps them
    assert not {db for db in databases(master) if "_split" in db}
    assert databases(replica) >= {"db00002", "db00003", "db00000_split3", "db00001_split3"}
    assert "db00000" not in databases(replica)
    new = Store(split, catalog=CATALOG, backend_options=APP_LOGIN)
    assert titles(new, written) == list(range(40))  # every row, from its new master
    after = [new.objects("note").create(shard, {"n": f"after {shard}"}) for shard in (0, 3)]
    with root(f"mysql://{replica.address}") as r:
        assert r.replica_status() is None and not r.read_only()
        r.query("CREATE DATABASE elsewhere")  # B's own, outside the moved shards
        r.query("CREATE TABLE db00000_split3.stray (n INT)")

    # B's writes to the moved shards reach A through the reverse stream, and nothing else.
    with root(f"mysql://{master.address}") as m, root(f"mysql://{replica.address}") as r:
        assert reverse_stream.caught_up(m, r, 30)
        assert "runs from" in reverse_stream.check(m, r, 3, [2, 3])
        assert m.value("SELECT COUNT(*) FROM db00003.notes WHERE data LIKE '%after 3%'") == 1
        assert m.value("SELECT COUNT(*) FROM db00000.notes WHERE data LIKE '%after 0%'") == 1
        assert m.replica_status() is None  # the stream is a named connection: A is no replica
    assert "elsewhere" not in databases(master) and "db00000_split3" not in databases(master)
    with pytest.raises(ShardReadOnly):  # A's copies stay fenced for a process on the old map
        old.objects("note").create(3, {"n": "stale"})

    plan = plan_split_revert(source, split=3, author="ada", connect=root)
    assert [line.split("  [")[0] for line in plan.lines()] == [
        "1. check revert_split3 on A follows B, healthy",
        "2. publish shard map v4: shards 2..3 read-only",
        "3. wait until every process follows shard map v4",
        "4. take the site's writes on shards 2..3 away on B (MySQL grants)",
        "5. wait until A has applied all of B's writes (revert_split3, GTID)",
        "6. stop and remove revert_split3 on A",
        "7. give the site's writes on shards 2..3 back on A",
        "8. publish shard map v5: shards 2..3 mastered by A; B out of service",
        "9. take the site's reads on shards 2..3 away on B too (MySQL grants)",
        "10. rename B's copies of shards 2..3 away",
    ]
    started: dict[int, float] = {}
    outcome = run(
        plan,
        journal=MemoryJournal(),
        locks=FileLocks(tmp_path),
        operator="ada",
        progress=lambda n, total, name: started.setdefault(n, time.monotonic()),
    )
    assert outcome.ok, outcome.error
    window = started[9] - started[2]  # from the read-only publish to the end of the last
    assert window < 2.0, f"read-only for {window:.2f}s"
    reverted = Topology.from_json(source.current("shards").document)
    assert [(r.first, r.last, r.master) for r in reverted.ranges] == [(0, 3, "A")]
    assert reverted.out_of_service == ("B",)  # it must be rebuilt as a replica first
    back = Store(reverted, catalog=CATALOG, backend_options=APP_LOGIN)
    assert titles(back, [*written, *after]) == [*range(40), "after 0", "after 3"]
    assert back.objects("note").create(3, {"n": "back on A"})
    with root(f"mysql://{master.address}") as m:
        assert reverse_stream.status(m, 3) is None
    assert {"db00002_reverted3", "db00003_reverted3"} <= databases(replica)

    # The long job's chunks drop a shard's copies on every host; again, they find none.
    cleanup = jobs.kind("cleanup")
    context = jobs.JobContext(back, mysql=root)
    params = cleanup.check({"split": 3, "without_backup": 1})  # (a backup's check: below)
    chunks = cleanup.chunks(context, params)
    assert [c.label for c in chunks] == ["shard 0", "shard 1", "shard 2", "shard 3"]
    with pytest.raises(JobError, match="no backup store is set"):
        cleanup.run_chunk(context, chunks[0], {"split": 3})
    assert cleanup.run_chunk(context, chunks[0], params) == {"dropped": 1}  # on B
    assert "db00000_split3" not in databases(replica) and "db00001_split3" in databases(replica)
    assert cleanup.run_chunk(context, chunks[0], params) == {"dropped": 0}
    execute(
        plan_cleanup(source, split=3, author="ada", connect=root, without_backup=True), tmp_path
    )
    assert not {
        db for db in databases(master) | databases(replica) if "_split" in db or "_reverted" in db
    }
    assert {"db00002", "db00003"} <= databases(master)  # the live ones, after the revert
    for server in (master, replica):  # no fence of the split's is left behind
        with root(f"mysql://{server.address}") as h:
            assert h.query("SELECT db FROM mysql.db WHERE db LIKE 'db0%' AND db <> 'db%'") == []
    with pytest.raises(InvalidTopology, match="no longer on B: cannot revert"):
        plan_split_revert(source, split=3, author="ada", connect=root)
    for store in (old, new, back):
        store.close()


def test_cleanup_of_a_split_that_stands_removes_the_stream_and_the_hosts_copies(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    execute(plan_split(source, host="A", author="ada", connect=root), tmp_path)
    backups = DirectoryStore(tmp_path / "backups")
    with pytest.raises(InvalidTopology, match="no backup store is set"):
        plan_cleanup(source, split=3, author="ada", connect=root)
    with pytest.raises(InvalidTopology, match=r"no backup of shards 2-3 since split 3 in file://.*: take one first"):  # fmt: skip
        plan_cleanup(source, split=3, author="ada", connect=root, store=backups)
    if shutil.which("mariadb-backup") is None:
        unavailable("mariadb-backup", "mariadb-backup is needed (Debian: mariadb-backup)")
    made = take(backups, host="B", address=f"mysql://{replica.address}", login=("root", ""), ranges="2-3")  # fmt: skip
    plan = plan_cleanup(source, split=3, author="ada", connect=root, store=backups)
    assert plan.params["kept"] == f"2-3 on B, backed up as B/{made.name}"
    execute(plan, tmp_path)
    with root(f"mysql://{master.address}") as m:
        assert reverse_stream.status(m, 3) is None
    assert {"db00000", "db00001"} <= databases(master)
    assert not databases(master) & {"db00002", "db00003"}  # A's copies of the moved shards
    assert {"db00002", "db00003"} <= databases(replica)  # B's, the live ones
    assert not {db for db in databases(replica) if "_split" in db}
    with pytest.raises(InvalidTopology, match="no reverse stream revert_split3"):
        plan_split_revert(source, split=3, author="ada", connect=root)


def test_a_cleanup_killed_inside_a_drop_is_resumed(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """``kill -9`` once A's copies are dropped but before the journal has it: resume plans
    the cleanup again and runs the drops after the journal's last step (A's again, which
    finds nothing left, then B's)."""
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    execute(plan_split(source, host="A", author="ada", connect=root), tmp_path)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")
    plan = plan_cleanup(source, split=3, author="ada", connect=root, without_backup=True)
    die_after(plan, 1, journal)
    plan.steps[1].run()  # A's copies dropped; the journal never heard of it
    (dead,) = journal.open_operations()
    again = recovery.plan_again(dead, source, author="bob", connect=root)
    assert recovery.resume(dead, again, journal=journal, locks=locks, operator="bob") == (
        "resumed by bob after step 1: 3 steps done"
    )
    assert journal.open_operations() == []
    assert [note for _, _, note in dead.entry.steps[1:]] == ["0 databases dropped on A", "2 databases dropped on B"]  # fmt: skip
    assert not databases(master) & {"db00002", "db00003"}
    assert not {db for db in databases(replica) if "_split" in db}


def test_a_revert_is_refused_when_the_reverse_stream_is_broken(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    execute(plan_split(source, host="A", author="ada", connect=root), tmp_path)
    with root(f"mysql://{master.address}") as m:
        m.query("STOP SLAVE 'revert_split3' SQL_THREAD")
    with pytest.raises(InvalidTopology, match=r"revert_split3 on .* is broken: SQL thread No"):
        plan_split_revert(source, split=3, author="ada", connect=root)
    with root(f"mysql://{master.address}") as m:  # a restart loses the filter: refused too
        m.query("STOP SLAVE 'revert_split3'")
        m.query("SET GLOBAL revert_split3.replicate_wild_do_table = ''")
        m.query("START SLAVE 'revert_split3'")
    with pytest.raises(InvalidTopology, match="its table filter is lost"):
        plan_split_revert(source, split=3, author="ada", connect=root)
    assert source.current("shards").version == 3  # nothing published


def test_a_split_that_died_after_its_final_publish_is_resumed_never_undone(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """``kill -9`` while the final publish's journal entry is being written: the new ranges
    are in force, writes land on B, and the journal's last step is 8. Undoing step 9 (the
    step a dead run may have begun) would hand the shards back to A without those writes:
    abort refuses, and resume carries on after the publish."""
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path, caught_up=False)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")
    plan = plan_split(source, host="A", author="ada", connect=root)
    die_after(plan, 8, journal)
    plan.steps[8].run()  # the publish went through; the journal never heard of it
    new = Store(Topology.from_json(source.current("shards").document), catalog=CATALOG, backend_options=APP_LOGIN)  # fmt: skip
    written = new.objects("note").create(3, {"n": "on B"})

    (dead,) = journal.open_operations()
    assert dead.done == 8
    again = recovery.plan_again(dead, source, author="bob", connect=root)
    with pytest.raises(StepFailed, match="step 9 took effect: resume the operation"):
        recovery.abort(dead, again, journal=journal, locks=locks, operator="bob")
    assert source.current("shards").version == 3  # nothing undone
    assert recovery.resume(dead, again, journal=journal, locks=locks, operator="bob") == (
        "resumed by bob after step 8: 10 steps done"
    )
    assert journal.open_operations() == []
    assert dead.entry.steps[-2][2].startswith("in effect already")
    assert titles(new, [written]) == ["on B"]
    assert "db00003" in databases(master) and "db00000_split3" in databases(replica)
    new.close()


def test_a_split_whose_diff_is_not_clean_changes_nothing(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path, caught_up=False)
    store = app_store(source)
    store.objects("note").create(3, {"n": 1})
    wait_caught_up(master, replica)  # else the stray row could collide with a replayed one
    with root(f"mysql://{replica.address}") as r:
        r.query("SET SESSION sql_log_bin = 0")  # a row only the replica has
        r.query("""INSERT INTO db00003.notes (data) VALUES ('{"n": "stray"}')""")

    report = diff_hosts(root, f"mysql://{master.address}", f"mysql://{replica.address}", [2, 3])
    assert not report.clean and report.position  # compared at one GTID position
    assert [table for table, _, _ in report.differences] == ["db00003.notes"]
    assert "db00003.notes: A 1 rows" in report.text() and "B 2 rows" in report.text()

    # The same as a journaled plan (the console's diff action): it fails on a difference.
    assert execute(plan_diff(source, a="A", b="B", shards=(0, 2), connect=root), tmp_path)
    outcome = run(
        plan_diff(source, a="A", b="B", connect=root),
        journal=MemoryJournal(),
        locks=FileLocks(tmp_path),
        operator="ada",
    )
    assert not outcome.ok and "db00003.notes: A 1 rows" in (outcome.error or "")

    outcome = run(
        plan_split(source, host="A", author="ada", connect=root),
        journal=MemoryJournal(),
        locks=FileLocks(tmp_path),
        operator="ada",
    )
    assert not outcome.ok and "1 tables differ" in (outcome.error or "")
    assert source.current("shards").version == 1
    assert {"db00002", "db00003"} <= databases(master)
    store.close()


def test_a_process_that_does_not_follow_the_read_only_map_abandons_the_split(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    source.report("stuck-process", {"shards": 1})  # alive (our pid), and never swaps

    plan = plan_split(source, host="A", author="ada", connect=root, follow_seconds=0.5)
    outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path), operator="ada")
    assert not outcome.ok and "1 of 1 processes still on an older shard map" in (
        outcome.error or ""
    )
    revision = source.current("shards")
    assert revision.version == 3 and revision.reason == "undo: split A onto B: read-only window"
    topology = Topology.from_json(revision.document)
    assert topology.read_only == ()  # the window is closed again
    assert [(r.first, r.last, r.master, r.replicas) for r in topology.ranges] == [
        (0, 3, "A", ("B",))
    ]
    with root(f"mysql://{replica.address}") as r:
        status = r.replica_status()
        assert status is not None and status.healthy  # still A's replica: nothing moved
    assert {"db00002", "db00003"} <= databases(master)


def test_the_masters_writes_are_acknowledged_while_the_diff_reads(
    pair: tuple[MariaDBServer, MariaDBServer],
) -> None:
    """A write on the master while the diff holds the replica at its snapshot still gets
    the replica's semi-synchronous acknowledgement: the diff stops only the applier."""
    master, replica = pair
    a, b = f"mysql://{master.address}", f"mysql://{replica.address}"
    with root(a) as m:
        m.query("CREATE DATABASE IF NOT EXISTS diffwrites")
        m.query("CREATE TABLE IF NOT EXISTS diffwrites.t (n INT)")
    wait_caught_up(master, replica)

    def semi_sync(name: str) -> int:
        with root(a) as m:
            return int(m.query(f"SHOW STATUS LIKE 'Rpl_semi_sync_master_{name}'")[0]["Value"])

    before = semi_sync("no_tx"), semi_sync("yes_tx")

    class WriteWhenBSnapshots(MySQLHost):
        def query(self, sql: str, params: tuple[object, ...] = ()) -> list[dict[str, object]]:
            if sql.startswith("START TRANSACTION") and self.port == replica.port:
                with root(a) as m:  # commits once the replica acknowledges (or times out)
                    m.query("INSERT INTO diffwrites.t VALUES (1)")
            return super().query(sql, params)

    report = diff_hosts(lambda address: WriteWhenBSnapshots(address, user="root", password=""), a, b, [0])  # fmt: skip
    assert report.clean and report.position
    assert semi_sync("no_tx") == before[0]  # no commit waited out the timeout
    assert semi_sync("yes_tx") > before[1]
