"""Planned failover on real MariaDB GTID replication: a master hands its shards to its
replica, nothing written before is lost, and a process still on the old map cannot write."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardstore import InvalidTopology, ShardReadOnly, Store, Topology, init_shards
from shardstore.control import recovery
from shardstore.control.emergency import plan_emergency_failover
from shardstore.control.failover import plan_failover
from shardstore.control.fencing import command_fence
from shardstore.control.file_source import FileSource
from shardstore.control.locks import FileLocks
from shardstore.control.mysql_hosts import HostError, MySQLHost, SemiSync
from shardstore.control.pairs import pair_health
from shardstore.control.plans import MemoryJournal, Plan, StepFailed, run
from tests.config_documents import eventually
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CATALOG
from .replication import APP_LOGIN, app_store, kill_master, publish_pair, root, wait_caught_up


def test_planned_failover_moves_the_master_and_loses_nothing(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)
    old = app_store(source)
    init_shards(old)  # on A; B gets the databases by replication
    written = [old.objects("note").create(n % 4, {"n": n}) for n in range(20)]
    old.mapping("folder_has_notes").add(old.objects("folder").create(1, {}), written[1])

    plan = plan_failover(source, host="A", author="ada", connect=root, quiet_seconds=0.2)
    assert [line.split("  [")[0] for line in plan.lines()] == [
        "1. check B replicates from A and is caught up",
        "2. set read_only on A, end its client sessions; no write lands for 0.2s",
        "3. wait until B has applied all of A's writes (GTID)",
        "4. make A replicate from B",
        "5. publish shard map v2: shards 0..3 mastered by B",
        "6. clear B's read_only",
    ]
    journal = MemoryJournal()
    outcome = run(plan, journal=journal, locks=FileLocks(tmp_path / "locks"), operator="ada")
    assert outcome.ok, outcome.error
    assert len(journal.entries[0].steps) == 6

    topology = Topology.from_json(source.current("shards").document)
    assert topology.range_of(0).master == "B" and topology.range_of(0).replicas == ("A",)
    new = Store(topology, catalog=CATALOG, backend_options=APP_LOGIN)
    assert [p["n"] for p in new.objects("note").get_many(written)] == list(range(20))  # all there
    after = new.objects("note").create(2, {"n": "after"})
    with root(f"mysql://{master.address}") as m, root(f"mysql://{replica.address}") as r:
        assert m.read_only() and not r.read_only()
        assert r.replica_status() is None
        status = m.replica_status()
        assert status is not None and status.healthy and status.source == replica.address
    [turned] = pair_health(source.current("shards").document, root)
    assert (turned.master, [r.name for r in turned.replicas], turned.problems) == ("B", ["A"], ())
    # A process still on the old map is fenced: its write is refused, typed, not lost silently.
    with pytest.raises(ShardReadOnly, match="read_only"):
        old.objects("note").create(2, {"n": "stale"})
    # The old master follows the new one.
    on_a = Store(
        Topology.from_json({**topology.as_json(), "ranges": [{"range": [0, 3], "master": "A"}]}),
        catalog=CATALOG,
        backend_options=APP_LOGIN,
    )
    assert eventually(lambda: on_a.objects("note").get(after) is not None, 10)
    on_a.close()
    old.close()
    new.close()


def test_failover_without_a_replication_account_changes_nothing(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)

    def operators_only(address: str) -> MySQLHost:
        return MySQLHost(address, user="root", password="")

    plan = plan_failover(source, host="A", author="ada", connect=operators_only)
    outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path), operator="ada")
    assert (
        not outcome.ok and "step 1" in outcome.error and "no replication account" in outcome.error
    )
    with root(f"mysql://{master.address}") as m:
        assert not m.read_only()


def test_failover_refuses_a_replica_that_is_not_following(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    with root(f"mysql://{replica.address}") as r:
        r.stop_replicating()
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)
    plan = plan_failover(source, host="A", author="ada", connect=root)
    outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path), operator="ada")
    assert not outcome.ok and "B does not replicate from A" in outcome.error
    assert source.current("shards").version == 1
    with root(f"mysql://{master.address}") as m:
        assert not m.read_only()  # the check comes first: nothing was frozen


def killed(host: str, address: str) -> str:
    """The fence of the tests: the master was killed (``kill -9``) before the failover."""
    return f"{host} was killed"


def test_emergency_failover_promotes_the_replica_with_every_acknowledged_write(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)
    with pytest.raises(InvalidTopology, match="A answers: fail it over as planned"):
        plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)

    old = app_store(source)
    init_shards(old)
    acknowledged = [old.objects("note").create(n % 4, {"n": n}) for n in range(50)]
    kill_master(master, replica)  # kill -9: no goodbye to the replica

    with pytest.raises(InvalidTopology, match="no fence command"):
        plan_emergency_failover(source, host="A", author="ada", fence=None, connect=root)
    plan = plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)
    assert [line.split("  [")[0] for line in plan.lines()][0::6] == [
        "1. confirm A is down, from the operator and every replica",
        "7. publish shard map v2: shards 0..3 mastered by B; A out of service",
    ]
    journal = MemoryJournal()
    outcome = run(plan, journal=journal, locks=FileLocks(tmp_path), operator="ada")
    assert outcome.ok, outcome.error
    assert journal.entries[0].steps[1][2] == "A fenced" or "A was killed" in outcome.notes[1]

    topology = Topology.from_json(source.current("shards").document)
    assert topology.range_of(0).master == "B" and topology.range_of(0).replicas == ()
    assert topology.out_of_service == ("A",)
    with root(f"mysql://{replica.address}") as r:  # armed before its first write
        assert r.semi_sync() == SemiSync(enabled=True, falls_back=True, replicas=0)
    [unpaired] = pair_health(source.current("shards").document, root)
    assert unpaired.master == "B" and "no replica in the shard map" in unpaired.problems
    new = Store(topology, catalog=CATALOG, backend_options=APP_LOGIN)
    assert [p["n"] for p in new.objects("note").get_many(acknowledged)] == list(range(50))
    new.objects("note").create(1, {"n": "after"})

    # The old master comes back: read_only, so a process still on the old map is refused.
    master.restart()
    with root(f"mysql://{master.address}") as m:
        assert m.read_only()
    with pytest.raises(ShardReadOnly, match="read_only"):
        old.objects("note").create(1, {"n": "stale"})
    old.close()
    new.close()


def test_emergency_failover_refuses_a_replica_that_stopped_replicating(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """The incident: a replica's I/O thread stopped, writes acknowledged on its master
    (asynchronously: semi-sync was off, as after a restart), then the master killed. The
    replica lacks them: promoting it must be refused, or recorded as loss."""
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)
    old = app_store(source)
    init_shards(old)
    wait_caught_up(master, replica)
    with root(f"mysql://{replica.address}") as r, root(f"mysql://{master.address}") as m:
        r.stop_receiving()
        m.set_semi_sync(False)
    lost = [old.objects("note").create(n % 4, {"n": n}) for n in range(3)]
    with root(f"mysql://{master.address}") as m:
        last = m.gtid_binlog_pos()
    kill_master(master, replica)

    with pytest.raises(HostError, match=r"I/O thread is stopped.*--accept-data-loss"):
        plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)
    assert source.current("shards").version == 1  # nothing promoted, the map unchanged
    with root(f"mysql://{replica.address}") as r:
        assert r.read_only()

    plan = plan_emergency_failover(
        source, host="A", author="ada", fence=killed, connect=root, accept_data_loss=True
    )
    journal = MemoryJournal()
    outcome = run(plan, journal=journal, locks=FileLocks(tmp_path), operator="ada")
    assert outcome.ok, outcome.error
    # The journal names the gap: every GTID after what B received, which A had.
    with root(f"mysql://{replica.address}") as r:
        received = r.gtid_current_pos()
    assert received != last
    assert f"every transaction after {received}" in journal.entries[0].summary
    assert "ACCEPTED DATA LOSS" in journal.entries[0].steps[0][2]
    new = app_store(source)
    assert new.objects("note").get_many(lost) == []  # what was lost, as the journal said
    new.close()
    old.close()


def test_a_master_that_answers_with_a_refusal_is_not_down(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)

    def wrong_password(address: str) -> MySQLHost:
        if address.endswith(master.address):
            return MySQLHost(address, user="root", password="wrong")  # 1045 access denied
        return root(address)

    with pytest.raises(HostError, match="answers with a refusal, so it is alive"):
        plan_emergency_failover(
            source, host="A", author="ada", fence=killed, connect=wrong_password
        )


def test_a_master_cut_off_from_the_operator_only_is_not_down(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """The operator's connections time out, but the replica still receives from it."""
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)

    def cut_off(address: str) -> MySQLHost:
        if address.endswith(master.address):
            raise HostError(f"{master.address} cannot be reached: timed out", 2003)
        return root(address)

    with pytest.raises(
        HostError, match=r"B still receives from A \(its I/O thread: \w+\): A is alive"
    ):
        plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=cut_off)
    assert source.current("shards").version == 1


def test_emergency_failover_refuses_a_replica_with_writes_of_its_own(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)
    wait_caught_up(master, replica)
    with root(f"mysql://{replica.address}") as r:  # a hand write on the replica: errant
        r.query("CREATE DATABASE errant")
    kill_master(master, replica)
    with pytest.raises(HostError, match="errant GTIDs 0-2-"):
        plan_emergency_failover(
            source, host="A", author="ada", fence=killed, connect=root, accept_data_loss=True
        )


def test_a_failed_fence_stops_the_failover_before_anything_changes(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)
    kill_master(master, replica)
    fence = command_fence("false")
    plan = plan_emergency_failover(source, host="A", author="ada", fence=fence, connect=root)
    outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path), operator="ada")
    assert not outcome.ok and "the fence command for A failed (1)" in outcome.error
    assert source.current("shards").version == 1
    with root(f"mysql://{replica.address}") as r:
        status = r.replica_status()
        assert r.read_only() and status is not None and status.io_state == "Connecting"


def test_a_planned_failover_that_fails_after_the_freeze_is_undone(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """A publish that loses its compare-and-set (someone published meanwhile) at step 5:
    the pair is turned back and the master is writable again."""
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)
    old = app_store(source)
    init_shards(old)
    plan = plan_failover(source, host="A", author="ada", connect=root, quiet_seconds=0.1)
    document = source.current("shards").document
    source.publish("shards", document, author="bob", reason="meanwhile")

    journal = MemoryJournal()
    outcome = run(plan, journal=journal, locks=FileLocks(tmp_path / "locks"), operator="ada")
    assert not outcome.ok and "step 5" in outcome.error and "3 steps undone" in outcome.error
    undone = [name for _, name, _ in journal.entries[0].steps if name.startswith("undo: ")]
    assert undone == [
        "undo: publish shard map v2: shards 0..3 mastered by B",
        "undo: make A replicate from B",
        "undo: set read_only on A, end its client sessions; no write lands for 0.1s",
    ]
    with root(f"mysql://{master.address}") as m, root(f"mysql://{replica.address}") as r:
        assert not m.read_only() and m.replica_status() is None
        status = r.replica_status()
        assert r.read_only() and status is not None and status.healthy
        assert status.source == master.address
    note = old.objects("note").create(1, {"n": "after the undo"})  # writable, and replicated
    wait_caught_up(master, replica)
    old.close()
    assert note


def die_after(plan: Plan, steps: int, journal: MemoryJournal) -> None:
    """A run killed with ``kill -9`` after ``steps`` steps: they ran and were journaled, its
    locks went with its process, its entry stays open."""
    entry = journal.begin(plan, operator="ada", dry_run=False)
    for index, step in enumerate(plan.steps[:steps], 1):
        journal.step(entry, index, step.name, step.run() or "done")


def test_a_planned_failover_killed_part_way_blocks_its_hosts_until_aborted(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)
    old = app_store(source)
    init_shards(old)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")
    die_after(plan_failover(source, host="A", author="ada", connect=root), 4, journal)
    with root(f"mysql://{master.address}") as m:
        assert m.read_only()  # what the dead run left: the shards take no write

    (dead,) = journal.open_operations()
    assert dead.done == 4 and recovery.state(dead, locks) == "left open"
    again = run(
        plan_failover(source, host="A", author="bob", connect=root),
        journal=journal,
        locks=locks,
        operator="bob",
    )
    assert not again.ok and "operation 1 (fail over A to B" in again.error
    assert "left open after step 4" in again.error

    with pytest.raises(StepFailed, match="had not taken effect"):
        recovery.resume(
            dead,
            recovery.plan_again(dead, source, author="bob", connect=root),
            journal=journal,
            locks=locks,
            operator="bob",
        )
    plan = recovery.plan_again(dead, source, author="bob", connect=root)
    assert recovery.abort(dead, plan, journal=journal, locks=locks, operator="bob") == (
        "aborted by bob after step 4: 3 steps undone"
    )
    assert journal.open_operations() == []
    with root(f"mysql://{master.address}") as m, root(f"mysql://{replica.address}") as r:
        assert not m.read_only() and m.replica_status() is None
        status = r.replica_status()
        assert status is not None and status.source == master.address and r.read_only()
    assert old.objects("note").create(1, {"n": "writable again"})
    # Aborting again finds nothing open; the failover now runs.
    outcome = run(
        plan_failover(source, host="A", author="bob", connect=root, quiet_seconds=0.1),
        journal=journal,
        locks=locks,
        operator="bob",
    )
    assert outcome.ok, outcome.error
    old.close()
