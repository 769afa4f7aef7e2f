"""A master cut off from its replica only, on real MariaDB replication: the site and the
operator still reach it, its replica cannot receive from it. Its commits wait for an
acknowledgement no replica sends (semi-sync with no fallback), so none of them was
acknowledged: ``failover --emergency`` fences it for real (read_only, its sessions ended,
the fence command) and promotes the replica, which holds every acknowledged write. It
refuses while a replica still receives from it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from shardstore import InvalidTopology, Topology
from shardstore.control.emergency import plan_emergency_failover
from shardstore.control.failover import plan_failover
from shardstore.control.file_source import FileSource
from shardstore.control.locks import FileLocks
from shardstore.control.mysql_hosts import HostError, MySQLHost
from shardstore.control.plans import MemoryJournal, run
from toolkit.servers.mariadb import MariaDBServer

from .replication import app_store, root, sharded_pair, start_servers, wait_caught_up


def cut_replica_off(master: MariaDBServer, replica: MariaDBServer) -> None:
    """The replica loses its master for good, the master staying up for everyone else: the
    replication account's password changed on the master alone (unlogged), its Binlog Dump
    session ended. The replica's I/O thread keeps trying (``Connecting``, access denied):
    it lost its source, it was not stopped by hand."""
    with root(f"mysql://{master.address}") as m:
        m.query("SET SESSION sql_log_bin = 0")
        m.query("SET PASSWORD FOR 'repl'@'127.0.0.1' = PASSWORD('changed')")
        for row in m.query(
            "SELECT id FROM information_schema.processlist WHERE command LIKE 'Binlog Dump%'"
        ):
            m.end_session(int(row["id"]))
    deadline = time.monotonic() + 15
    with root(f"mysql://{replica.address}") as r:
        while not ((status := r.replica_status()) and status.io_state == "Connecting"):
            assert time.monotonic() < deadline, f"the replica still sees its master: {status}"
            time.sleep(0.05)
        assert status.lost_source


def blocked_write(master: MariaDBServer, result: dict[str, str]) -> threading.Thread:
    """A write as the site's user that waits for an acknowledgement no replica sends; once
    it waits, ``result["write"]`` says how its client saw it end."""

    def write() -> None:
        try:
            address = f"mysql://{master.address}"
            with MySQLHost(address, user="app", password="app-password", timeout=60) as site:
                site.query("""INSERT INTO db00001.notes (data) VALUES ('{"n": "blocked"}')""")
        except HostError as exc:
            result["write"] = f"failed: {exc}"
        else:
            result["write"] = "acknowledged"

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    with root(f"mysql://{master.address}") as m:
        while not m.query(
            "SELECT id FROM information_schema.processlist WHERE user = 'app'"
            " AND state LIKE 'Waiting for semi-sync ACK%'"
        ):
            assert time.monotonic() < deadline and thread.is_alive(), result
            time.sleep(0.05)
    return thread


def fenced(host: str, address: str) -> str:
    return f"{host} fenced"


def blocked_rows(server: MariaDBServer) -> int:
    with root(f"mysql://{server.address}") as s:
        return int(s.value("""SELECT COUNT(*) FROM db00001.notes WHERE data LIKE '%blocked%'"""))


def test_a_master_cut_off_from_its_replica_only_is_fenced_and_failed_over(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path, caught_up=False)
    store = app_store(source)
    acknowledged = [store.objects("note").create(n % 4, {"n": n}) for n in range(20)]
    store.close()
    wait_caught_up(master, replica)
    cut_replica_off(master, replica)
    result: dict[str, str] = {}
    thread = blocked_write(master, result)

    # The planned failover cannot catch the replica up, and says what ends this.
    outcome = run(
        plan_failover(source, host="A", author="ada", connect=root),
        journal=MemoryJournal(),
        locks=FileLocks(tmp_path / "locks"),
        operator="ada",
    )
    assert not outcome.ok and "`failover A --emergency` fences it" in outcome.error
    assert "write" not in result  # still waiting: never acknowledged

    plan = plan_emergency_failover(source, host="A", author="ada", fence=fenced, connect=root)
    assert plan.params["answers"] and plan.params["replica"] == "B"
    assert plan.params["data_loss"] == ""
    assert [line.split("  [")[0] for line in plan.lines()][:2] == [
        "1. confirm no replica receives from A, which answers (cut off from them)",
        "2. fence A: read_only and its client sessions ended if it answers, then the fence command",
    ]
    journal = MemoryJournal()
    outcome = run(plan, journal=journal, locks=FileLocks(tmp_path / "locks"), operator="ada")
    assert outcome.ok, outcome.error
    thread.join(10)
    assert result["write"].startswith("failed:")  # its session ended: never acknowledged
    note = journal.entries[0].steps[1][2]
    assert "A read_only, 1 client sessions ended" in note and "A fenced" in note
    assert "never pointed at B" in note and "`rebuild A`" in note

    topology = Topology.from_json(source.current("shards").document)
    assert topology.range_of(0).master == "B" and topology.out_of_service == ("A",)
    new = app_store(source)
    assert [p["n"] for p in new.objects("note").get_many(acknowledged)] == list(range(20))
    new.objects("note").create(1, {"n": "after"})
    new.close()
    # The write no replica acknowledged committed on A alone: A must be rebuilt.
    assert blocked_rows(replica) == 0 and blocked_rows(master) == 1
    with root(f"mysql://{master.address}") as m:
        assert m.read_only()


def test_a_master_that_answers_is_not_failed_over_while_a_replica_receives(
    tmp_path: Path,
) -> None:
    """A with two replicas: B cut off from it, C still receiving (as an account of its own,
    so the cut spares it). C acknowledges A's commits: refused. And when the operator
    cannot ask C, A itself says it still sends its binary log to a replica: refused too."""
    servers = start_servers(3)
    master, b, c = servers
    try:
        with root(f"mysql://{master.address}") as m:
            m.query("SET SESSION sql_log_bin = 0")
            m.query("CREATE USER 'repl2'@'127.0.0.1' IDENTIFIED BY 'repl2-password'")
            m.query("GRANT REPLICATION SLAVE ON *.* TO 'repl2'@'127.0.0.1'")
            m.query("SET SESSION sql_log_bin = 1")
            m.set_semi_sync(True)
            m.set_read_only(False)
        with root(f"mysql://{b.address}") as r, root(f"mysql://{master.address}") as m:
            r.replicate_from(m)
        c_root = MySQLHost(
            f"mysql://{c.address}", user="root", password="", replication="repl2:repl2-password"
        )
        with c_root, root(f"mysql://{master.address}") as m:
            c_root.replicate_from(m)
        source = FileSource(tmp_path / "config")
        source.publish(
            "shards",
            {
                "version": 0,
                "shard_count": 4,
                "hosts": {
                    name: f"mysql://{s.address}" for name, s in zip("ABC", servers, strict=True)
                },
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
        cut_replica_off(master, b)

        with pytest.raises(InvalidTopology, match=r"A answers: fail it over as planned.*C still"):
            plan_emergency_failover(source, host="A", author="ada", fence=fenced, connect=root)

        def c_unreachable(address: str) -> MySQLHost:
            if address.endswith(c.address):
                raise HostError(f"{c.address} cannot be reached: timed out", 2003)
            return root(address)

        with pytest.raises(HostError, match=r"sends its binary log to 1 replica.*C does not"):
            plan_emergency_failover(
                source, host="A", author="ada", fence=fenced, connect=c_unreachable
            )
        assert source.current("shards").version == 1
        with root(f"mysql://{master.address}") as m:
            assert not m.read_only()
    finally:
        for server in servers:
            server.stop()
