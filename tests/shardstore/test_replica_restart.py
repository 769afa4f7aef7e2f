"""A replica restarted after its master died, on real MariaDB replication (GTID, semi-sync).

What MariaDB does: a replica whose two replication threads start while both are stopped
(at its server's start, as they do by default, or at ``START SLAVE`` and even ``START SLAVE
SQL_THREAD``) deletes its relay log, and what it had received and acknowledged but not
applied is gone with its dead master. So replicas start with ``skip_slave_start``; their
kept relay log is applied with GTID off (``relay_log.apply_kept``); the emergency failover
applies it before it judges, refuses a restarted candidate without ``--accept-data-loss``,
and refuses one behind what the fleet probe last recorded of the master's replicas
(``acknowledged``), whose relay log was lost another way."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardstore import Store
from shardstore.control import acknowledged, relay_log
from shardstore.control.emergency import plan_emergency_failover
from shardstore.control.file_source import FileSource
from shardstore.control.locks import FileLocks
from shardstore.control.mysql_hosts import HostError
from shardstore.control.plans import MemoryJournal, run
from toolkit.servers.mariadb import MariaDBServer

from .replication import app_store, kill_master, root, sharded_pair


def killed(host: str, address: str) -> str:
    return f"{host} was killed"


def received_unapplied(
    master: MariaDBServer, replica: MariaDBServer, tmp_path: Path
) -> tuple[FileSource, list[int], list[int]]:
    """The pair's shards with notes the replica applied, then notes its I/O thread
    received (and so acknowledged) while its SQL thread was stopped: applied, unapplied."""
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    store = app_store(source)
    applied = [store.objects("note").create(n % 4, {"n": n}) for n in range(4)]
    with root(f"mysql://{replica.address}") as r, root(f"mysql://{master.address}") as m:
        assert r.wait_for(m.gtid_binlog_pos(), 60)
        r.query("STOP SLAVE SQL_THREAD")
    unapplied = [store.objects("note").create(n % 4, {"n": n}) for n in range(4, 9)]
    store.close()
    return source, applied, unapplied


def record_replicas(source: FileSource, replica: MariaDBServer) -> list[acknowledged.Record]:
    """What the fleet probe records, from the replica as it is now."""
    with root(f"mysql://{replica.address}") as r:
        status = r.replica_status()
    return acknowledged.record(source, source.current("shards").document, {"B": status})


def found(store: Store, ids: list[int]) -> list[int]:
    return [note["n"] for note in store.objects("note").get_many(ids)]


def test_a_replica_restarted_after_its_master_died_is_promoted_only_accepting_loss_and_keeps_what_it_received(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source, applied, unapplied = received_unapplied(master, replica, tmp_path)
    kill_master(master, replica)
    replica.halt()
    replica.restart()  # its threads stay stopped: the relay log is kept

    with pytest.raises(HostError, match=r"B was restarted at .*--accept-data-loss"):
        plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)
    assert source.current("shards").version == 1
    with root(f"mysql://{replica.address}") as r:  # its kept relay log applied meanwhile
        status = r.replica_status()
        assert status is not None and status.sql_running and not status.io_running
        assert r.read_only()

    plan = plan_emergency_failover(
        source, host="A", author="ada", fence=killed, connect=root, accept_data_loss=True
    )
    assert "B was restarted" in plan.params["data_loss"]
    outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path), operator="ada")
    assert outcome.ok, outcome.error
    new = app_store(source)  # on B: every write A acknowledged, none lost with a relay log
    assert found(new, applied + unapplied) == list(range(9))
    new.close()


def test_mariadb_deletes_the_relay_log_when_a_thread_starts_with_both_stopped(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """Why: what MariaDB 10.11 does with GTID replication, which the rules above rest on."""
    master, replica = pair
    _, applied, unapplied = received_unapplied(master, replica, tmp_path)
    with root(f"mysql://{master.address}") as m:
        sent = m.gtid_binlog_pos()
    kill_master(master, replica)

    replica.halt()
    replica.restart()  # with skip_slave_start: both threads stopped, the relay log there
    with root(f"mysql://{replica.address}") as r:
        before = r.value("SELECT @@global.gtid_slave_pos")
        r.query("START SLAVE SQL_THREAD")  # the SQL thread alone deletes it as well
        r.query("STOP SLAVE SQL_THREAD")
        assert r.value("SELECT @@global.gtid_slave_pos") == before != sent
        assert r.value("SELECT COUNT(*) FROM db00000.notes") == 1

    replica.extra_args.remove("--skip-slave-start")
    replica.halt()
    replica.restart()  # both threads start at boot: nothing left to apply either
    with root(f"mysql://{replica.address}") as r:
        status = r.replica_status()
        assert status is not None and status.io_state == "Connecting" and status.lost_source
        assert status.received == before  # it shows no more received than it applied
    assert len(applied) == 4 and len(unapplied) == 5


def test_the_kept_relay_log_is_applied_and_replication_started_again(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """The restart path of a replica whose master lives (``make cluster``, the runbook)."""
    master, replica = pair
    source, applied, unapplied = received_unapplied(master, replica, tmp_path)
    replica.halt(kill=True)
    replica.restart()
    with root(f"mysql://{replica.address}") as r:
        kept = relay_log.start(r, 30)
        assert kept is not None and kept.restarted and kept.after != kept.before
        assert relay_log.start(r, 30) is None  # running: nothing to do
    store = app_store(source)
    more = store.objects("note").create(0, {"n": 9})  # acknowledged by B again
    store.close()
    with root(f"mysql://{replica.address}") as r, root(f"mysql://{master.address}") as m:
        assert r.wait_for(m.gtid_binlog_pos(), 30)
        status = r.replica_status()
        assert status is not None and status.healthy
        assert r.value("SELECT COUNT(*) FROM db00000.notes") == 4  # n=0, 4, 8 and 9
    assert len(applied + unapplied + [more]) == 10


def test_a_replica_killed_while_applying_starts_from_what_it_applied(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """MariaDB does not write the SQL thread's relay log position at every commit: after a
    crash it may name a transaction applied already, which strict mode would refuse to
    apply again. The kept relay log is applied from the first GTID not applied."""
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    store = app_store(source)
    written = [store.objects("note").create(n % 4, {"n": n}) for n in range(20)]
    with root(f"mysql://{replica.address}") as r, root(f"mysql://{master.address}") as m:
        assert r.wait_for(m.gtid_binlog_pos(), 60)
    replica.halt(kill=True)
    replica.restart()
    with root(f"mysql://{replica.address}") as r:
        kept = relay_log.start(r, 30)
        assert kept is not None and kept.after == kept.before  # it had applied all
    written.append(store.objects("note").create(0, {"n": 20}))
    store.close()
    with root(f"mysql://{replica.address}") as r, root(f"mysql://{master.address}") as m:
        assert r.wait_for(m.gtid_binlog_pos(), 30)
        status = r.replica_status()
        assert status is not None and status.healthy, status
        assert r.value("SELECT COUNT(*) FROM db00000.notes") == 6  # n=0, 4, ..., 20


def test_a_candidate_behind_the_recorded_position_is_refused_and_the_gap_named(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """The relay log lost another way (replication stopped and started by hand, after the
    master died): the replica looks as if it never received more, and only the fleet
    probe's record shows what it had."""
    master, replica = pair
    source, applied, unapplied = received_unapplied(master, replica, tmp_path)
    [made] = record_replicas(source, replica)
    with root(f"mysql://{master.address}") as m:
        assert made.received == m.gtid_binlog_pos() and made.master == "A"
    kill_master(master, replica)
    with root(f"mysql://{replica.address}") as r:
        r.query("STOP SLAVE")
        r.query("START SLAVE")  # deletes the relay log: what it received is gone

    with pytest.raises(HostError, match=r"less than A's replicas had received.*--accept-data-loss"):
        plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)
    plan = plan_emergency_failover(
        source, host="A", author="ada", fence=killed, connect=root, accept_data_loss=True
    )
    assert f"up to {made.received}" in plan.params["data_loss"]
    journal = MemoryJournal()
    assert run(plan, journal=journal, locks=FileLocks(tmp_path), operator="ada").ok
    assert f"up to {made.received}" in journal.entries[0].summary
    new = app_store(source)
    assert found(new, applied + unapplied) == list(range(4))  # the gap, as the journal says
    new.close()


def test_a_complete_candidate_is_not_refused_by_the_record(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source, applied, unapplied = received_unapplied(master, replica, tmp_path)
    record_replicas(source, replica)
    with root(f"mysql://{replica.address}") as r:
        r.query("START SLAVE SQL_THREAD")  # running: nothing deletes its relay log
    kill_master(master, replica)
    plan = plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)
    assert plan.params["data_loss"] == ""
    assert run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path), operator="ada").ok
    new = app_store(source)
    assert found(new, applied + unapplied) == list(range(9))
    new.close()


def test_the_relay_log_is_read_page_by_page_from_where_each_event_begins(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a crash the SQL thread's recorded position may lag what it applied by
    thousands of events, read a page at a time: each page from where its first event
    begins in the relay log (an event's End_log_pos is in its master's binary log, a
    wrong offset there). Read from the relay log's start, two events a page, the first
    unapplied transaction is found where the SQL thread's position says it is."""
    master, replica = pair
    source, applied, unapplied = received_unapplied(master, replica, tmp_path)
    with root(f"mysql://{replica.address}") as r:
        r.query("STOP SLAVE IO_THREAD")
        (row,) = r.query("SHOW SLAVE STATUS")
        at = (str(row["Relay_Log_File"]), int(row["Relay_Log_Pos"]))
        expected = relay_log._first_unapplied(r, *at)
        monkeypatch.setattr(relay_log, "PAGE", 2)
        assert expected is not None
        assert relay_log._first_unapplied(r, at[0], 4) == expected
        kept = relay_log.apply_kept(r, 30)
    assert kept is not None and kept.after != kept.before
    store = app_store(source)
    assert found(store, applied + unapplied) == list(range(9))
    store.close()
