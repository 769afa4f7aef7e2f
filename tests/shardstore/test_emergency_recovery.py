"""An emergency failover whose operator died part way, on real MariaDB replication: once it
has reset the replica's replication it cannot be undone (the replica cannot follow the old
master again), so ``abort`` refuses and ``resume`` finishes it, a run killed inside the
promotion included; before that, ``abort`` closes it and the failover runs again from the
start. A replica left replicating from no one by a run whose entry was closed is promoted
again only with ``--accept-data-loss``, and one that is behind another replica never."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shardstore import Topology, init_shards
from shardstore.control import recovery
from shardstore.control.emergency import plan_emergency_failover
from shardstore.control.file_source import FileSource
from shardstore.control.locks import FileLocks
from shardstore.control.mysql_hosts import HostError, SemiSync
from shardstore.control.plans import MemoryJournal, Plan, StepFailed, run
from toolkit.servers.mariadb import MariaDBServer

from .replication import (
    app_store,
    kill_master,
    root,
    sharded_pair,
    start_servers,
    wait_caught_up,
)


def killed(host: str, address: str) -> str:
    return f"{host} was killed"


def died_after(plan: Plan, steps: int, journal: MemoryJournal) -> Any:
    """Run ``steps`` steps of ``plan`` as ``run`` does, then stop as a ``kill -9`` would:
    the entry stays open."""
    entry = journal.begin(plan, operator="ada", dry_run=False)
    for index, step in enumerate(plan.steps[:steps], 1):
        journal.step(entry, index, step.name, step.run() or "done")
    return entry


def end(how: str, source: FileSource, journal: MemoryJournal, locks: FileLocks) -> str:
    [operation] = journal.open_operations()
    return recovery.end(
        operation.id, how, source=source, journal=journal, locks=locks, operator="bob",
        connect=root, fence=killed,
    )  # fmt: skip


def test_killed_after_the_promotion_it_is_resumed_not_aborted(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path, caught_up=False)
    store = app_store(source)
    written = [store.objects("note").create(n % 4, {"n": n}) for n in range(10)]
    store.close()
    kill_master(master, replica)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")

    plan = plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)
    died_after(plan, 5, journal)  # promoted, not yet published
    blocked = run(plan, journal=journal, locks=locks, operator="carl")  # no second run meanwhile
    assert not blocked.ok and "was left open after step 5" in blocked.error
    with pytest.raises(StepFailed, match="step 4 took effect: resume"):
        end("abort", source, journal, locks)
    assert "resumed by bob after step 5" in end("resume", source, journal, locks)
    assert journal.open_operations() == []

    topology = Topology.from_json(source.current("shards").document)
    assert topology.range_of(0).master == "B" and topology.out_of_service == ("A",)
    new = app_store(source)
    assert [p["n"] for p in new.objects("note").get_many(written)] == list(range(10))
    new.objects("note").create(1, {"n": "after"})
    new.close()


def test_killed_before_the_promotion_it_is_aborted_and_run_again(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path, caught_up=False)
    kill_master(master, replica)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")

    plan = plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)
    died_after(plan, 3, journal)  # the replica stopped receiving and applied what it had
    with pytest.raises(StepFailed, match="had not taken effect at step 3: abort it"):
        end("resume", source, journal, locks)
    assert "aborted by bob after step 3" in end("abort", source, journal, locks)
    with root(f"mysql://{replica.address}") as r:
        assert r.read_only()

    again = plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)
    outcome = run(again, journal=journal, locks=locks, operator="ada")
    assert outcome.ok, outcome.error
    assert Topology.from_json(source.current("shards").document).range_of(0).master == "B"


def promoted_in_part(replica: MariaDBServer, *, armed: bool = False) -> None:
    """What a run killed inside the promotion leaves: the replica's replication reset
    (``STOP SLAVE``, ``RESET SLAVE ALL``), semi-sync perhaps armed, still read-only."""
    with root(f"mysql://{replica.address}") as r:
        r.stop_replicating()
        if armed:
            r.arm_semi_sync()
        assert r.read_only() and r.replica_status() is None


def assert_promoted(source: FileSource, replica: MariaDBServer, written: list[int]) -> None:
    """``replica`` (B) masters the shards, writable, semi-sync armed; nothing written lost."""
    with root(f"mysql://{replica.address}") as r:
        assert not r.read_only() and r.replica_status() is None
        assert r.semi_sync() == SemiSync(enabled=True, falls_back=True, replicas=0)
    topology = Topology.from_json(source.current("shards").document)
    assert topology.range_of(0).master == "B" and topology.out_of_service == ("A",)
    new = app_store(source)
    assert [p["n"] for p in new.objects("note").get_many(written)] == list(range(len(written)))
    new.objects("note").create(1, {"n": "after"})
    new.close()


def written_then_killed(
    master: MariaDBServer, replica: MariaDBServer, tmp_path: Path
) -> tuple[FileSource, list[int]]:
    source = sharded_pair(master, replica, tmp_path=tmp_path, caught_up=False)
    store = app_store(source)
    written = [store.objects("note").create(n % 4, {"n": n}) for n in range(10)]
    store.close()
    kill_master(master, replica)
    return source, written


@pytest.mark.parametrize("armed", [False, True], ids=["reset", "reset-and-armed"])
def test_killed_inside_the_promotion_it_is_resumed_and_finished(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path, armed: bool
) -> None:
    master, replica = pair
    source, written = written_then_killed(master, replica, tmp_path)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")
    plan = plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)
    died_after(plan, 3, journal)
    promoted_in_part(replica, armed=armed)  # then kill -9, before the journal had the step

    # Failing over again is refused, and says what to do: resume the run that died.
    with pytest.raises(HostError, match=r"B replicates from no one.*`shardstore resume OP`"):
        plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)
    again = plan_emergency_failover(
        source, host="A", author="ada", fence=killed, connect=root, accept_data_loss=True
    )
    blocked = run(again, journal=journal, locks=locks, operator="carl")
    assert not blocked.ok and "left open after step 3" in blocked.error
    assert "`shardstore resume 1` finishes it" in blocked.error
    with pytest.raises(StepFailed, match="step 4 took effect: resume"):
        end("abort", source, journal, locks)

    assert "resumed by bob after step 3" in end("resume", source, journal, locks)
    assert journal.open_operations() == []
    assert journal.entries[0].steps[3][2] == "in effect already (its run died before journaling it)"
    assert_promoted(source, replica, written)


def test_a_replica_promoted_in_part_by_a_closed_run_is_promoted_again_with_accepted_loss(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """The entry was closed (``abort --close``, or an abort before a promotion cut short
    counted as in effect): the replica replicates from no one, read-only, and what it had
    received but not applied, if anything, is gone with its relay log. Failing over again
    recognises it, but nothing shows it holds every acknowledged write: it takes
    ``--accept-data-loss``, and the journal names the gap."""
    master, replica = pair
    source, written = written_then_killed(master, replica, tmp_path)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")
    plan = plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)
    died_after(plan, 3, journal)
    promoted_in_part(replica)
    assert "closed by bob after step 3" in end("close", source, journal, locks)

    with pytest.raises(HostError, match=r"B replicates from no one.*--accept-data-loss"):
        plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)
    again = plan_emergency_failover(
        source, host="A", author="ada", fence=killed, connect=root, accept_data_loss=True
    )
    assert again.params["replica"] == "B"
    outcome = run(again, journal=journal, locks=locks, operator="ada")
    assert outcome.ok, outcome.error
    with root(f"mysql://{replica.address}") as r:
        applied = r.value("SELECT @@global.gtid_slave_pos")
    entry = journal.entries[-1]
    assert f"every transaction after {applied}" in entry.summary
    assert "ACCEPTED DATA LOSS" in entry.steps[0][2]
    assert_promoted(source, replica, written)


@pytest.fixture
def trio() -> Iterator[tuple[MariaDBServer, MariaDBServer, MariaDBServer]]:
    """A master with two replicas (B and C), each a range's replica in the map."""
    servers = start_servers(3)
    master, b, c = servers
    try:
        with root(f"mysql://{master.address}") as m:
            m.set_semi_sync(True)
            m.set_read_only(False)
        for replica in (b, c):
            with root(f"mysql://{replica.address}") as r, root(f"mysql://{master.address}") as m:
                r.replicate_from(m)
        yield master, b, c
    finally:
        for server in servers:
            server.stop()


def test_a_replica_that_replicates_from_no_one_and_is_behind_another_is_not_promoted(
    trio: tuple[MariaDBServer, MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """B's replication was reset while A still took writes (C acknowledged them): B lacks
    them, so it is passed over, even with --accept-data-loss; C, which replicated from A
    until it died and has all B has, is promoted."""
    master, b, c = trio
    source = FileSource(tmp_path / "config")
    source.publish(
        "shards",
        {
            "version": 0,
            "shard_count": 4,
            "hosts": {name: f"mysql://{s.address}" for name, s in zip("ABC", trio, strict=True)},
            "ranges": [
                {"range": [0, 1], "master": "A", "replica": "B"},
                {"range": [2, 3], "master": "A", "replica": "C"},
            ],
            "open": [[0, 3]],
            "lookup_shards": 4,
        },
        author="setup",
        reason="a master with two replicas",
    )
    store = app_store(source)
    init_shards(store)
    wait_caught_up(master, b)
    promoted_in_part(b)
    written = [store.objects("note").create(n % 4, {"n": n}) for n in range(10)]
    store.close()
    kill_master(master, c)

    for accept in (False, True):
        plan = plan_emergency_failover(
            source, host="A", author="ada", fence=killed, connect=root, accept_data_loss=accept
        )
        assert (plan.params["replica"], plan.params["data_loss"]) == ("C", "")
    with root(f"mysql://{b.address}") as r:
        assert f"B applied {r.value('SELECT @@global.gtid_slave_pos')}" in plan.params["ranked"]
    outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path), operator="ada")
    assert outcome.ok, outcome.error
    topology = Topology.from_json(source.current("shards").document)
    assert {topology.range_of(0).master, topology.range_of(3).master} == {"C"}
    new = app_store(source)
    assert [p["n"] for p in new.objects("note").get_many(written)] == list(range(10))
    new.close()
