"""Planned failover's commit point on real MariaDB replication: killed past its publish it
is resumed, never undone; turned back, the pair first waits for what the replica wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardstore.control import recovery
from shardstore.control.failover import plan_failover
from shardstore.control.file_source import FileSource
from shardstore.control.locks import FileLocks
from shardstore.control.mysql_hosts import gtid_domains
from shardstore.control.plans import MemoryJournal, Plan, StepFailed, run
from shardstore.control.publish import plan_rollback
from tests.config_documents import eventually
from toolkit.servers.mariadb import MariaDBServer

from .replication import app_store, publish_pair, root, sharded_pair
from .test_failover import die_after


def die_in(plan: Plan, step: int, journal: MemoryJournal) -> None:
    """A run killed inside step ``step``, once the step had done its work but before the
    journal had it."""
    die_after(plan, step - 1, journal)
    plan.steps[step - 1].run()


@pytest.mark.parametrize(
    ("how", "step"), [("after", 5), ("in", 5), ("after", 6)], ids=["after-publish", "in-publish", "after-last"]
)  # fmt: skip
def test_a_planned_failover_killed_past_its_publish_is_resumed_never_undone(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path, how: str, step: int
) -> None:
    """Once the map names the replica, writes may be acknowledged there: abort refuses
    (it would hand the shards back to a master that lacks them), and resume finishes."""
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path, caught_up=False)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")
    plan = plan_failover(source, host="A", author="ada", connect=root, quiet_seconds=0.1)
    (die_after if how == "after" else die_in)(plan, step, journal)
    (dead,) = journal.open_operations()

    again = recovery.plan_again(dead, source, author="bob", connect=root)
    with pytest.raises(StepFailed, match="step 5 took effect: resume the operation"):
        recovery.abort(dead, again, journal=journal, locks=locks, operator="bob")
    assert recovery.resume(dead, again, journal=journal, locks=locks, operator="bob") == (
        f"resumed by bob after step {dead.done}: 6 steps done"
    )
    assert journal.open_operations() == []
    new = app_store(source)
    assert new.topology.range_of(0).master == "B"
    assert new.objects("note").create(1, {"n": "on the new master"})
    new.close()
    with root(f"mysql://{master.address}") as m:
        status = m.replica_status()
        assert m.read_only() and status is not None and status.source == replica.address


def test_turning_the_pair_back_waits_for_what_the_replica_wrote(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """Aborted after the swap, with a transaction on the replica that the old master has
    received but not applied: abort refuses rather than reset replication (which would
    drop it with the relay log), then turns the pair back once it is applied."""
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path, caught_up=False)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")
    plan = plan_failover(source, host="A", author="ada", connect=root, catch_up_seconds=1)
    die_after(plan, 4, journal)  # A replicates from B
    with root(f"mysql://{master.address}") as m, root(f"mysql://{replica.address}") as r:
        m.query("STOP SLAVE SQL_THREAD")
        r.set_read_only(False)  # a write on B, as if it had been opened
        r.query('INSERT INTO db00001.notes (data) VALUES (\'{"n": "on B"}\')')
        position = r.gtid_binlog_pos()
        assert eventually(lambda: (s := m.replica_status()) is not None and gtid_domains(s.received) == gtid_domains(position), 10)  # fmt: skip
    (dead,) = journal.open_operations()
    again = recovery.plan_again(dead, source, author="bob", connect=root)
    with pytest.raises(StepFailed, match="has not applied"):
        recovery.abort(dead, again, journal=journal, locks=locks, operator="bob")
    with root(f"mysql://{master.address}") as m:
        assert m.replica_status() is not None  # still replicating: nothing dropped
        m.query("START SLAVE SQL_THREAD")
    (dead,) = journal.open_operations()
    assert "aborted by bob" in recovery.abort(dead, again, journal=journal, locks=locks, operator="bob")  # fmt: skip
    with root(f"mysql://{master.address}") as m:
        assert m.value("SELECT COUNT(*) FROM db00001.notes WHERE data LIKE '%on B%'") == 1
        assert not m.read_only()


def test_a_rollback_across_a_failover_is_refused_and_the_map_stands(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """The map before a failover names the old master, now a read-only replica of the new
    one: rolled back to, no shard of the range would take a write. Refused, with what to
    do instead."""
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")
    failover = plan_failover(source, host="A", author="ada", connect=root, quiet_seconds=0.1)
    assert run(failover, journal=journal, locks=locks, operator="ada").ok
    rollback = plan_rollback(source, "shards", 1, author="bob", reason="undo it", connect=root)
    assert rollback.lines()[0].startswith("1. check that A can be master")
    outcome = run(rollback, journal=journal, locks=locks, operator="bob")
    assert not outcome.ok and "A replicates from" in outcome.error and "`failover`" in outcome.error
    assert source.current("shards").version == 2
