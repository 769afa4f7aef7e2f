"""An emergency failover whose operator died part way, on real MariaDB replication: once it
has promoted the replica it cannot be undone (the replica's replication is reset), so
``abort`` refuses and ``resume`` finishes it; before that, ``abort`` closes it and the
failover runs again from the start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shardstore import Topology, init_shards
from shardstore.control import recovery
from shardstore.control.emergency import plan_emergency_failover
from shardstore.control.file_source import FileSource
from shardstore.control.locks import FileLocks
from shardstore.control.plans import MemoryJournal, Plan, StepFailed, run
from toolkit.servers.mariadb import MariaDBServer

from .replication import app_store, kill_master, publish_pair, root, sharded_pair


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
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)
    store = app_store(source)
    init_shards(store)
    written = [store.objects("note").create(n % 4, {"n": n}) for n in range(10)]
    store.close()
    kill_master(master, replica)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")

    plan = plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)
    died_after(plan, 4, journal)  # promoted, not yet published
    blocked = run(plan, journal=journal, locks=locks, operator="carl")  # no second run meanwhile
    assert not blocked.ok and "was left open after step 4" in blocked.error
    with pytest.raises(StepFailed, match="step 4 took effect: resume"):
        end("abort", source, journal, locks)
    assert "resumed by bob after step 4" in end("resume", source, journal, locks)
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
    source = sharded_pair(master, replica, tmp_path, caught_up=False)
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
