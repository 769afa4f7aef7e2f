"""Rebuilding a host as a replica, on real MariaDB replication: an empty host copied from
its master under writes, a former master whose data diverged, the refusals, and a run
whose operator died part way (resumed from the copy, or aborted)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from shardstore import InvalidTopology, Store, Topology, init_shards
from shardstore.control import recovery
from shardstore.control.emergency import plan_emergency_failover
from shardstore.control.file_source import FileSource
from shardstore.control.host_service import plan_host_service
from shardstore.control.locks import FileLocks
from shardstore.control.mysql_hosts import HostError
from shardstore.control.plans import MemoryJournal, Plan, run
from shardstore.control.rebuild import plan_rebuild
from shardstore.control.snapshot_copy import Throttle, copy_databases, shard_databases
from shardstore.replicas import MOST
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CATALOG
from .replication import APP_LOGIN, app_store, kill_master, publish_pair, root, start_servers

SHARDS = 8


@pytest.fixture
def master_and_empty() -> Any:
    """A master taking writes (no replica yet), and an empty server."""
    master, empty = start_servers(2)
    try:
        with root(f"mysql://{master.address}") as m:
            m.set_read_only(False)
        yield master, empty
    finally:
        empty.stop()
        master.stop()


def shards_on_master(
    master: MariaDBServer, empty: MariaDBServer, tmp_path: Path
) -> tuple[FileSource, Store]:
    """The pair's map, its shards made on the master alone, and a store on it."""
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, empty, shards=SHARDS)
    store = app_store(source)
    init_shards(store, hosts=["A"])
    return source, store


def replica_out_of_service(source: FileSource, tmp_path: Path) -> None:
    """B was A's replica, then failed: taken out of service (the runbook's first step)."""
    plan = plan_host_service(source, host="B", in_service=False, author="ada")
    assert run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path / "locks"), operator="ada").ok  # fmt: skip


def reader(source: FileSource, host: str) -> Store:
    """A store that reads the shards on ``host`` (a replica: reads only)."""
    document = source.current("shards").document
    ranges = [{"range": [0, SHARDS - 1], "master": host}]
    return Store(Topology.from_json({**document, "ranges": ranges}), catalog=CATALOG, backend_options=APP_LOGIN)  # fmt: skip


class Writer(threading.Thread):
    """Notes written without a pause until ``stop``: the acknowledged ones, by id."""

    def __init__(self, store: Store) -> None:
        super().__init__(daemon=True)
        self.store, self.written, self.errors = store, {}, []  # type: ignore[var-annotated]
        self.done = threading.Event()

    def run(self) -> None:
        n = 0
        while not self.done.is_set():
            try:
                self.written[self.store.objects("note").create(n % SHARDS, {"n": n})] = n
            except Exception as error:  # noqa: BLE001 - reported by the test
                self.errors.append(error)
                return
            n += 1

    def stop(self) -> dict[int, int]:
        self.done.set()
        self.join(30)
        assert not self.errors, self.errors
        return self.written


def assert_replica(source: FileSource, master: MariaDBServer, replica: MariaDBServer, name: str, of: str) -> None:  # fmt: skip
    """``name`` replicates from ``of`` without error, which waits for its acknowledgements,
    and the map names it ``of``'s replica, in service."""
    with root(f"mysql://{master.address}") as m, root(f"mysql://{replica.address}") as r:
        assert r.wait_for(m.gtid_binlog_pos(), 60)
        status = r.replica_status()
        assert status is not None and status.healthy and status.source == master.address
        assert r.read_only()
        semi = {row["Variable_name"]: row["Value"] for row in m.query("SHOW STATUS LIKE 'Rpl_semi_sync_master_%'")}  # fmt: skip
        assert semi["Rpl_semi_sync_master_status"] == "ON"
        assert int(semi["Rpl_semi_sync_master_clients"]) == 1
    topology = Topology.from_json(source.current("shards").document)
    assert topology.range_of(0).master == of and topology.range_of(0).replicas == (name,)
    assert name not in topology.out_of_service


def test_an_empty_host_is_rebuilt_under_writes_and_loses_nothing(
    master_and_empty: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, empty = master_and_empty
    source, store = shards_on_master(master, empty, tmp_path)
    replica_out_of_service(source, tmp_path)
    writer = Writer(store)
    writer.start()

    said: list[str] = []
    plan = plan_rebuild(source, host="B", author="ada", connect=root, say=said.append)
    assert plan.summary == f"rebuild B as the replica of A (shards 0..{SHARDS - 1})"
    assert [line.split(":")[0].split("  [")[0] for line in plan.lines()] == [
        "1. check A takes writes and B answers",
        "2. wipe B",
        f"3. copy A's shard databases (shards 0..{SHARDS - 1}) onto B",
        "4. B replicates from A from the copy's GTID position",
        "5. wait until B has caught up with A (at most 10s behind)",
        "6. compare B with A",
        "7. A waits for B's acknowledgements (semi-sync)",
        "8. publish the shard map",
    ]
    outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path / "locks"), operator="ada")  # fmt: skip
    assert outcome.ok, outcome.error
    written = writer.stop()
    assert len(written) > 20
    assert said[-1] == f"shards {SHARDS}/{SHARDS}"
    assert "commits held" in outcome.notes[2]  # 4 streams opened one snapshot
    assert_replica(source, master, empty, "B", "A")

    copy = reader(source, "B")
    found = copy.objects("note").get_many(list(written))
    assert [p["n"] for p in found] == list(written.values())  # every acknowledged note
    copy.close()
    store.close()


def test_a_former_master_whose_data_diverged_is_rebuilt(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica, shards=SHARDS)
    store = app_store(source)
    init_shards(store)
    before = [store.objects("note").create(n % SHARDS, {"n": n}) for n in range(10)]
    store.close()
    kill_master(master, replica)
    locks = FileLocks(tmp_path / "locks")
    plan = plan_emergency_failover(source, host="A", author="ada", fence=lambda h, a: "killed", connect=root)  # fmt: skip
    assert run(plan, journal=MemoryJournal(), locks=locks, operator="ada").ok
    master.restart()
    with root(f"mysql://{master.address}") as old:  # a write B never had: A diverged
        old.query('INSERT INTO db00001.notes (data) VALUES (\'{"n": "errant"}\')')
    store = app_store(source)  # on B now
    after = [store.objects("note").create(n % SHARDS, {"n": n}) for n in range(10, 15)]

    plan = plan_rebuild(source, host="A", author="ada", connect=root, parallel=1)
    assert plan.params["master"] == "B"
    outcome = run(plan, journal=MemoryJournal(), locks=locks, operator="ada")
    assert outcome.ok, outcome.error
    assert outcome.notes[1] == f"{SHARDS} shard databases dropped on A, its binary log reset"
    assert_replica(source, replica, master, "A", "B")
    later = store.objects("note").create(3, {"n": "later"})
    with root(f"mysql://{replica.address}") as m, root(f"mysql://{master.address}") as r:
        assert r.wait_for(m.gtid_binlog_pos(), 30)
        assert r.value("SELECT COUNT(*) FROM db00001.notes WHERE data LIKE '%errant%'") == 0
    copy = reader(source, "A")
    assert [p["n"] for p in copy.objects("note").get_many([*before, *after])] == list(range(15))
    assert copy.objects("note").get(later)["n"] == "later"
    copy.close()
    store.close()


def shards_document(hosts: list[str], ranges: list[dict[str, Any]], out: list[str]) -> dict[str, Any]:  # fmt: skip
    return {
        "version": 0, "shard_count": SHARDS, "lookup_shards": SHARDS,
        "hosts": {name: f"mysql://127.0.0.1:{3300 + n}" for n, name in enumerate(hosts)},
        "ranges": ranges, "open": [[0, SHARDS - 1]], "out_of_service": out,
    }  # fmt: skip


def test_a_master_or_a_host_with_no_master_is_refused(tmp_path: Path) -> None:
    source = FileSource(tmp_path / "config")
    halves = [{"range": [0, 3], "master": "A", "replica": "B"}, {"range": [4, 7], "master": "C"}]
    source.publish("shards", shards_document(["A", "B", "C", "D"], halves, ["D"]), author="t", reason="map")  # fmt: skip

    def refused(host: str, match: str, master: str | None = None) -> None:
        with pytest.raises(InvalidTopology, match=match):
            plan_rebuild(source, host=host, author="ada", connect=root, master=master)

    refused("A", "A is the master of shards 0..3: a master is never rebuilt")
    refused("D", "D never served a range: name its master with --master")
    many = [f"R{n}" for n in range(1, MOST)]  # with B: as many replicas as a range may have
    crowded = [{"range": [0, 3], "master": "A", "replicas": ["B", *many]}, {"range": [4, 7], "master": "C"}]  # fmt: skip
    source.publish("shards", shards_document(["A", "B", "C", "D", *many], crowded, ["D"]), author="t", reason="map")  # fmt: skip
    refused("D", f"A has {MOST} replicas already: B, R1", master="A")
    source.publish("shards", shards_document(["A", "B", "C", "D"], halves, ["D"]), author="t", reason="map")  # fmt: skip
    refused("D", "B is the master of no range", master="B")
    refused("E", "no host E in the shard map")
    # D served shards 0..7 under A and C; both hold some of them now: ambiguous.
    source.publish("shards", shards_document(["A", "B", "C", "D"], [{"range": [0, 7], "master": "D"}], []), author="t", reason="D")  # fmt: skip
    source.publish("shards", shards_document(["A", "B", "C", "D"], [{"range": [0, 3], "master": "A"}, {"range": [4, 7], "master": "C"}], ["D"]), author="t", reason="split")  # fmt: skip
    refused("D", r"D last served shards 0..7 \(map v4\), now held by A, C: name the master")


def died_in(plan: Plan, step: int, journal: MemoryJournal) -> None:
    """Run the steps before ``step`` as ``run`` does, then die (``kill -9``) in it."""
    entry = journal.begin(plan, operator="ada", dry_run=False)
    for index, done in enumerate(plan.steps[: step - 1], 1):
        journal.step(entry, index, done.name, done.run() or "done")


def end(how: str, source: FileSource, journal: MemoryJournal, locks: FileLocks) -> str:
    [operation] = journal.open_operations()
    return recovery.end(operation.id, how, source=source, journal=journal, locks=locks, operator="bob", connect=root)  # fmt: skip


def test_a_run_that_died_is_aborted_or_resumed_from_the_copy(
    master_and_empty: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, empty = master_and_empty
    source, store = shards_on_master(master, empty, tmp_path)
    written = [store.objects("note").create(n % SHARDS, {"n": n}) for n in range(12)]
    replica_out_of_service(source, tmp_path)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")

    # Died once B replicated: abort stops its replication, and it stays out of service.
    died_in(plan_rebuild(source, host="B", author="ada", connect=root), 5, journal)
    result = end("abort", source, journal, locks)
    assert "aborted by bob after step 4: 2 steps undone" in result
    undone = [note for _, name, note in journal.entries[0].steps if name.startswith("undo: ")]
    assert undone[-1] == "B left out of service, wiped, replicating from no one: rebuild it again"
    with root(f"mysql://{empty.address}") as b:
        assert b.replica_status() is None and b.read_only()
    assert "B" in Topology.from_json(source.current("shards").document).out_of_service

    # Died in the copy, half of it loaded: resume copies again from scratch, and finishes.
    plan = plan_rebuild(source, host="B", author="ada", connect=root)
    died_in(plan, 3, journal)
    with root(f"mysql://{empty.address}") as b:
        b.query("CREATE DATABASE db00002")
        b.query("CREATE TABLE db00002.half (n INT)")
    more = [store.objects("note").create(n % SHARDS, {"n": n}) for n in range(12, 20)]
    assert "resumed by bob after step 2: 8 steps done" in end("resume", source, journal, locks)
    assert journal.open_operations() == []
    assert_replica(source, master, empty, "B", "A")
    copy = reader(source, "B")
    assert [p["n"] for p in copy.objects("note").get_many([*written, *more])] == list(range(20))
    with root(f"mysql://{empty.address}") as b:
        assert b.value("SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'half'") == 0  # fmt: skip
    copy.close()
    store.close()


def test_the_copy_keeps_every_value_and_table_as_it_was(master_and_empty: Any) -> None:
    """Values that a conversion would change (time zones, NULL against the text 'NULL',
    bytes that are not UTF-8, the largest integers, a zero key, decimals, JSON as written),
    a table's counter and its comment, and rows beyond one batch, from two streams."""
    master, empty = master_and_empty
    with root(f"mysql://{master.address}") as m, root(f"mysql://{empty.address}") as b:
        m.query("SET SESSION time_zone = '+05:30', sql_mode = 'NO_AUTO_VALUE_ON_ZERO'")
        for db in ("db00001", "db00002_split3"):
            m.query(f"CREATE DATABASE {db} CHARACTER SET latin1")
            m.query(
                f"CREATE TABLE {db}.odd (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY,"
                " ts TIMESTAMP(6) NULL, t VARCHAR(20) CHARACTER SET utf8mb4, b VARBINARY(8),"
                " d DECIMAL(30,10), j JSON, f DOUBLE) AUTO_INCREMENT=500 COMMENT='kept'"
            )
            m.query(
                f"INSERT INTO {db}.odd VALUES (0, '2026-03-29 02:30:00.123456', 'NULL', x'00ff27', 1e-10, '{{\"a\":  [1, 2.50]}}', 0.1),"
                " (18446744073709551615, NULL, NULL, NULL, NULL, NULL, -1.7976931348623157e308),"
                " (7, '1970-01-01 05:30:01', 'é\\n''😀', '', 12345678901234567890.1234567890, 'null', 5e-324)"
            )  # fmt: skip
            m.query(f"CREATE TABLE {db}.many (n INT PRIMARY KEY, pad CHAR(255))")
            m.query(f"INSERT INTO {db}.many SELECT seq, REPEAT('x', 255) FROM seq.seq_1_to_6000")
        throttle = Throttle(m)
        done = copy_databases(m, b, shard_databases(m), throttle=throttle, parallel=2)
        assert done.databases == 2 and done.gtid == m.gtid_binlog_pos()
        for db in ("db00001", "db00002_split3"):
            for table in ("odd", "many"):
                assert b.query(f"SHOW CREATE TABLE {db}.{table}") == m.query(f"SHOW CREATE TABLE {db}.{table}")  # fmt: skip
                assert b.query(f"CHECKSUM TABLE {db}.{table}")[0]["Checksum"] == m.query(f"CHECKSUM TABLE {db}.{table}")[0]["Checksum"]  # fmt: skip
            b.query("SET SESSION time_zone = '+05:30'")
            order = f"SELECT id, HEX(ts), t, HEX(b), d, j, f FROM {db}.odd ORDER BY id"
            assert b.query(order) == m.query(order)
        assert (
            b.value("SELECT @@global.gtid_binlog_pos") == ""
        )  # nothing entered its own binary log


def test_a_copy_that_differs_from_its_master_is_never_put_in_service(
    master_and_empty: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """A row changed on the copy alone, after it caught up: the compare step finds it, the
    run stops there, and the host stays out of service."""
    master, empty = master_and_empty
    source, store = shards_on_master(master, empty, tmp_path)
    note = store.objects("note").create(1, {"n": "on A"})
    replica_out_of_service(source, tmp_path)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")
    plan = plan_rebuild(source, host="B", author="ada", connect=root)
    compare = next(n for n, line in enumerate(plan.lines(), 1) if ". compare B with A" in line)
    died_in(plan, compare, journal)
    with root(f"mysql://{empty.address}") as b:
        b.query("SET SESSION sql_log_bin = 0")
        b.query('UPDATE db00001.notes SET data = \'{"n": "changed on B"}\'')
    with pytest.raises(HostError, match=r"(?s)the copy differs: .*db00001\.notes: A 1 rows"):
        end("resume", source, journal, locks)
    assert "B" in Topology.from_json(source.current("shards").document).out_of_service
    assert note
