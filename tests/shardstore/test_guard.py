"""``shardstore guard`` on real MariaDB replication: a master killed is failed over with no
person (the emergency failover's own checks and fence), a second death of the range within
the cool-down waits for a person, a paused guard and one that is the side cut off do
nothing but say so, and a guard's failover left open by its death is finished by the next.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shardstore.control.context import Control
from shardstore.control.emergency import plan_emergency_failover
from shardstore.control.file_source import FileSource
from shardstore.control.guard import GUARD, Guard, keep_watch, status
from shardstore.control.locks import FileLocks
from shardstore.control.mysql_hosts import HostError, MySQLHost
from shardstore.control.plans import MemoryJournal
from toolkit.servers.mariadb import MariaDBServer

from .replication import app_store, kill_master, root, sharded_pair
from .test_emergency_recovery import killed
from .test_reopen import cli


def guard_on(source: FileSource, tmp_path: Path, connect: Any = root, **options: Any) -> Guard:
    def no_store(*_: Any) -> Any:
        raise AssertionError("the guard opens no store")

    control = Control(
        source, no_store, no_store, MemoryJournal(), FileLocks(tmp_path / "locks"), GUARD,
        mysql=connect, fence=killed,
    )  # fmt: skip
    return Guard(control, confirm_seconds=0, **options)


def publish_pair_of(source: FileSource) -> None:
    """A map of two MySQL hosts nothing listens on: the guard's switch needs none."""
    source.publish(
        "shards",
        {
            "version": 0, "shard_count": 4, "hosts": {"A": "mysql://127.0.0.1:9", "B": "mysql://127.0.0.1:10"},
            "ranges": [{"range": [0, 3], "master": "A", "replica": "B"}], "open": [[0, 3]], "lookup_shards": 4,
        },
        author="setup", reason="a pair",
    )  # fmt: skip


def master_of(source: FileSource) -> str:
    return str(source.current("shards").document["ranges"][0]["master"])


def test_a_dead_master_is_failed_over_and_a_second_death_waits_for_a_person(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    store = app_store(source)
    written = [store.objects("note").create(n % 4, {"n": n}) for n in range(8)]
    store.close()
    guard = guard_on(source, tmp_path)
    assert guard.tick() == []  # both answer: nothing to do

    kill_master(master, replica)
    [decision] = guard.tick()
    assert decision.kind == "failover", decision
    assert "A has not answered" in decision.evidence and "emergency failover of A to B" in decision.evidence  # fmt: skip
    assert master_of(source) == "B"
    store = app_store(source)
    assert [store.objects("note").get(n)["n"] for n in written] == list(range(8))
    store.objects("note").create(1, {"n": "after"})  # B takes writes
    store.close()
    [operation] = guard.control.journal.entries  # type: ignore[attr-defined]
    assert operation.operator == GUARD and operation.ok

    replica.halt(kill=True)  # B dies too, within the cool-down
    [waits] = guard.tick()
    assert waits.kind == "cooling-down" and "B waits for a person" in waits.evidence
    assert master_of(source) == "B"
    assert [d.kind for d in guard.decisions()] == ["cooling-down", "failover"]
    guard.tick()  # the same decision again takes the place of the one before
    assert [d.kind for d in guard.decisions()] == ["cooling-down", "failover"]


def test_a_paused_guard_and_one_cut_off_from_a_live_master_do_nothing(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    a = f"mysql://{master.address}"

    def cut_off_from_a(address: str) -> MySQLHost:  # the guard's side of a partition
        if address == a:
            raise HostError(f"{master.address} cannot be reached: timed out", 2003)
        return root(address)

    [ambiguous] = guard_on(source, tmp_path, cut_off_from_a).tick()
    assert ambiguous.kind == "ambiguous" and "B still receives from it" in ambiguous.evidence
    assert master_of(source) == "A"

    kill_master(master, replica)
    guard = guard_on(source, tmp_path)
    guard.set_paused(True, by="ada", reason="maintenance")
    [paused] = guard.tick()
    assert paused.kind == "paused" and "fail it over by hand" in paused.evidence
    assert master_of(source) == "A"
    lines: list[str] = []
    keep_watch(guard, instance="g1", interval=0, passes=3, say=lines.append)
    assert [line.split(":")[0] for line in lines] == ["g1 is the active guard", "paused A"]
    guard.set_paused(False, by="ada", reason="done")
    assert [d.kind for d in guard.tick()] == ["failover"] and master_of(source) == "B"


def test_a_failover_left_open_by_a_guard_that_died_is_finished_by_the_next(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    kill_master(master, replica)
    first = guard_on(source, tmp_path)
    plan = plan_emergency_failover(source, host="A", author=GUARD, fence=killed, connect=root)
    journal = first.control.journal
    entry = journal.begin(plan, operator=GUARD, dry_run=False)
    for index, step in enumerate(plan.steps[:5], 1):  # promoted, not yet published: killed
        journal.step(entry, index, step.name, step.run() or "done")
    assert master_of(source) == "A"

    second = guard_on(source, tmp_path)
    second.control.journal = journal  # the same journal, another process's guard
    lines: list[str] = []
    keep_watch(second, instance="g2", interval=0, passes=1, say=lines.append)
    assert lines[0] == "g2 is the active guard"
    assert any(line.startswith("resumed A: operation") for line in lines), lines
    assert master_of(source) == "B" and journal.open_operations() == []
    assert status(source).leader["instance"] == "g2"  # its pass, for the metrics


def test_the_guard_is_paused_from_the_command_line_as_an_operation(tmp_path: Path) -> None:
    source = FileSource(tmp_path / "config")
    publish_pair_of(source)
    status, out = cli(tmp_path, "guard", "pause", "--reason", "moving racks")
    assert status == 0, out
    assert "1. pause the guard" in out and "the guard is paused: moving racks" in out
    status, out = cli(tmp_path, "guard", "status")
    assert status == 0 and out.startswith("the guard is PAUSED"), out
    status, out = cli(tmp_path, "guard", "pause", "--reason", "again")
    assert status != 0 and "the guard is paused already" in out
    status, out = cli(tmp_path, "guard", "unpause", "--reason", "racks moved")
    assert status == 0 and "the guard is watching: racks moved" in out, out
    status, out = cli(tmp_path, "guard", "status", "--json")
    assert json.loads(out)["paused"] is False
