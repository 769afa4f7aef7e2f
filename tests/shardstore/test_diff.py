"""The diff of two hosts finds what a weaker row hash misses, on real MariaDB replication:
NULL in another column, a separator inside a value, a column one host lacks; and it
compares many shards in chunks, each at one GTID position."""

from __future__ import annotations

from pathlib import Path

from shardstore.control import recovery
from shardstore.control.diff import diff_hosts, plan_diff
from shardstore.control.locks import FileLocks
from shardstore.control.plans import MemoryJournal
from toolkit.servers.mariadb import MariaDBServer

from .replication import root, sharded_pair, wait_caught_up


def on_replica_only(replica: MariaDBServer, *statements: str) -> None:
    with root(f"mysql://{replica.address}") as r:
        r.query("SET SESSION sql_log_bin = 0")
        for statement in statements:
            r.query(statement)


def test_rows_that_differ_only_where_a_weak_hash_is_blind_are_found(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    sharded_pair(master, replica, tmp_path=tmp_path, caught_up=False)
    a, b = f"mysql://{master.address}", f"mysql://{replica.address}"
    with root(a) as m:
        for db in ("db00001", "db00002", "db00003"):
            m.query(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, x VARCHAR(10), y VARCHAR(10))")
        m.query("INSERT INTO db00001.t VALUES (1, 'a', NULL)")
        m.query("INSERT INTO db00002.t VALUES (1, 'a#b', 'c')")
        m.query("INSERT INTO db00003.t VALUES (1, 'a', 'b')")
    wait_caught_up(master, replica)
    assert diff_hosts(root, a, b, [0, 1, 2, 3], chunk=2).clean

    on_replica_only(
        replica,
        "UPDATE db00001.t SET x = NULL, y = 'a'",  # the NULL moved: CONCAT_WS skips NULLs
        "UPDATE db00002.t SET x = 'a', y = 'b#c'",  # the separator moved
        "ALTER TABLE db00003.t ADD COLUMN z INT NULL",  # a column the master lacks
    )
    report = diff_hosts(root, a, b, [0, 1, 2, 3], chunk=2)
    assert [table for table, _, _ in report.differences] == [
        "db00001.t", "db00002.t", "db00003.t",
    ]  # fmt: skip
    with root(a) as m:
        tables = m.value(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema IN"
            " ('db00000', 'db00001', 'db00002', 'db00003')"
        )
    assert report.position and report.tables == tables  # every table of every shard
    assert "db00001.t: A 1 rows" in report.text() and "B 1 rows" in report.text()


def test_a_diff_killed_inside_a_chunk_is_aborted_and_the_replica_applies_again(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """Killed between stopping B's applier and starting it again: its entry stays open, and
    ``abort`` starts the applier (B would otherwise fall behind for good)."""
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")
    plan = plan_diff(source, a="A", b="B", connect=root)
    journal.begin(plan, operator="ada", dry_run=False)  # killed in its first chunk:
    with root(f"mysql://{replica.address}") as r:
        r.query("STOP SLAVE SQL_THREAD")
    (dead,) = journal.open_operations()
    said = recovery.end(dead.id, "abort", source=source, journal=journal, locks=locks, operator="bob", connect=root)  # fmt: skip
    assert said == "aborted by bob after step 0: 1 steps undone"
    with root(f"mysql://{replica.address}") as r:
        status = r.replica_status()
        assert status is not None and status.healthy
    assert journal.open_operations() == []
