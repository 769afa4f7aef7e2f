"""Operations that change where data lives: plan, lock, journal, steps; and the range and
host operations, run for real on SQLite hosts (the MySQL run is in tests/site)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from shardstore import InvalidTopology, Store, Topology, init_shards
from shardstore.control.close_range import plan_close_range
from shardstore.control.file_source import FileSource
from shardstore.control.host_service import plan_host_service
from shardstore.control.locks import CONFIG, FileLocks, HostsBusy, ZooKeeperLocks
from shardstore.control.open_range import plan_open_range
from shardstore.control.plans import MemoryJournal, Plan, Step, run

from .catalog import CATALOG, open_store


@pytest.fixture
def source(tmp_path: Path) -> FileSource:
    """A config directory whose shard map puts 16 SQLite shards on host A (replica A2)."""
    source = FileSource(tmp_path / "config")
    source.publish(
        "shards",
        {
            "version": 0,
            "shard_count": 16,
            "hosts": {"A": f"sqlite://{tmp_path / 'A'}", "A2": f"sqlite://{tmp_path / 'A2'}"},
            "ranges": [{"range": [0, 15], "master": "A", "replica": "A2"}],
            "open": [[0, 15]],
            "lookup_shards": 16,
        },
        author="setup",
        reason="first map",
    )
    store = Store(Topology.from_json(source.current("shards").document), catalog=CATALOG)
    init_shards(store)
    store.close()
    return source


def execute(plan: Plan, tmp_path: Path, journal: MemoryJournal | None = None) -> Any:
    journal = journal if journal is not None else MemoryJournal()
    outcome = run(plan, journal=journal, locks=FileLocks(tmp_path / "locks"), operator="ada")
    assert outcome.ok, outcome.error
    return outcome


def test_a_dry_run_is_journaled_and_changes_nothing(source: FileSource, tmp_path: Path) -> None:
    ran: list[str] = []
    plan = Plan("demo", "two steps", [Step("one", ("A",), lambda: ran.append("1") or "ok")])
    journal = MemoryJournal()
    outcome = run(plan, journal=journal, locks=FileLocks(tmp_path), operator="ada", dry_run=True)
    assert outcome.dry_run and ran == []
    (entry,) = journal.entries
    assert entry.dry_run and entry.plan == ["1. one  [A]"] and entry.operator == "ada"


def test_steps_run_in_order_and_a_failure_stops_the_run(tmp_path: Path) -> None:
    ran: list[str] = []

    def fail() -> str:
        raise RuntimeError("disk full")

    plan = Plan(
        "demo",
        "three steps",
        [
            Step("first", ("A",), lambda: ran.append("first") or "did first"),
            Step("second", ("B",), fail),
            Step("third", ("A",), lambda: ran.append("third") or "did third"),
        ],
    )
    journal = MemoryJournal()
    outcome = run(plan, journal=journal, locks=FileLocks(tmp_path), operator="ada")
    assert not outcome.ok and ran == ["first"]
    assert outcome.error == "step 2 (second) failed: disk full"
    (entry,) = journal.entries
    assert entry.ok is False and entry.steps == [(1, "first", "did first")]
    assert entry.result == outcome.error


def test_a_failure_undoes_the_steps_before_it_newest_first(tmp_path: Path) -> None:
    """The failed step's undo runs too (it may have stopped half-way), then the others',
    back to the last step that took effect; steps without an undo are skipped."""
    done: list[str] = []

    def step(name: str, *, fails: bool = False, commits: bool = False, undo: bool = True) -> Step:
        def do() -> str:
            if fails:
                raise RuntimeError("connection lost")
            done.append(name)
            return f"did {name}"

        def back() -> str:
            done.append(f"undo {name}")
            return f"undid {name}"

        return Step(name, ("A",), do, back if undo else None, commits)

    plan = Plan(
        "demo", "", [step("one"), step("two", undo=False), step("three"), step("four", fails=True)]
    )
    journal = MemoryJournal()
    outcome = run(plan, journal=journal, locks=FileLocks(tmp_path), operator="ada")
    assert not outcome.ok
    assert outcome.error == "step 4 (four) failed: connection lost; 3 steps undone"
    assert done == ["one", "two", "three", "undo four", "undo three", "undo one"]
    assert [s[1] for s in journal.entries[0].steps][3:] == [
        "undo: four",
        "undo: three",
        "undo: one",
    ]

    done.clear()
    plan = Plan(
        "demo",
        "",
        [step("one"), step("two", commits=True), step("three"), step("four", fails=True)],
    )
    outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path), operator="ada")
    assert "after step 2, which took effect: it stands" in outcome.error
    assert done == ["one", "two", "three", "undo four", "undo three"]


def test_an_interrupted_operator_undoes_what_ran(tmp_path: Path) -> None:
    """Ctrl-C (KeyboardInterrupt) or SIGTERM in a step: the run undoes, then reports."""
    import os
    import signal

    done: list[str] = []

    def terminated() -> str:
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("SIGTERM did not interrupt the step")

    def interrupted() -> str:
        raise KeyboardInterrupt

    for stop in (terminated, interrupted):
        done.clear()
        plan = Plan(
            "demo",
            "",
            [
                Step(
                    "freeze",
                    ("A",),
                    lambda: done.append("freeze") or "",
                    lambda: done.append("thaw") or "",
                ),
                Step("wait", ("A",), stop),
            ],
        )
        outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path), operator="ada")
        assert not outcome.ok and "the operator's command was interrupted" in outcome.error
        assert done == ["freeze", "thaw"]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # put back after the run


def test_every_publish_holds_the_config_lock(source: FileSource, tmp_path: Path) -> None:
    """A rollback cannot run while another operation that publishes holds the config."""
    locks = FileLocks(tmp_path / "locks")
    close = plan_close_range(source, first=0, last=7, author="ada")
    assert CONFIG in close.locks and close.hosts == ()
    with locks.hold([CONFIG], owner="bob: split"):
        outcome = run(close, journal=MemoryJournal(), locks=locks, operator="ada")
    assert (
        not outcome.ok
        and outcome.error == f"the config is locked by: bob: split (pid {os.getpid()})"
    )
    assert source.current("shards").version == 1


def test_a_zookeeper_lock_lost_stops_the_run_before_its_next_step(
    tmp_path: Path, zookeeper_server: Any
) -> None:
    from kazoo.client import KazooClient

    client = KazooClient(hosts=zookeeper_server.address)
    client.start()
    try:
        root = f"/locks-lost-{tmp_path.name}"
        done: list[str] = []

        def lose_the_lock() -> str:
            (node,) = client.get_children(f"{root}/locks/A")
            client.delete(f"{root}/locks/A/{node}")  # as a session expiry would
            return "lost"

        plan = Plan(
            "demo",
            "",
            [
                Step("one", ("A",), lose_the_lock, lambda: done.append("undo one") or ""),
                Step("two", ("A",), lambda: done.append("two") or ""),
            ],
        )
        outcome = run(
            plan, journal=MemoryJournal(), locks=ZooKeeperLocks(client, root), operator="ada"
        )
        assert not outcome.ok and "lost with its ZooKeeper session" in outcome.error
        assert done == ["undo one"]
    finally:
        client.stop()
        client.close()


@pytest.mark.parametrize("kind", ["files", "zookeeper"])
def test_two_operations_never_hold_one_host(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if kind == "files":
        locks: Any = FileLocks(tmp_path / "locks")
    else:
        from kazoo.client import KazooClient

        zookeeper = request.getfixturevalue("zookeeper_server")
        client = KazooClient(hosts=zookeeper.address)
        client.start()
        request.addfinalizer(client.close)
        request.addfinalizer(client.stop)
        locks = ZooKeeperLocks(client, f"/locks-test-{tmp_path.name}")
    inside, release = threading.Event(), threading.Event()

    def first_operation() -> None:
        with locks.hold(["B", "A"], owner="bob: failover"):
            inside.set()
            release.wait(10)

    holder = threading.Thread(target=first_operation)
    holder.start()
    assert inside.wait(10)
    try:
        plan = Plan("demo", "touches A", [Step("one", ("A", "C"), lambda: "ok")])
        outcome = run(plan, journal=MemoryJournal(), locks=locks, operator="ada")
        assert not outcome.ok and "host A is locked by" in outcome.error
        if kind == "files":
            assert "bob: failover" in outcome.error
        with locks.hold(["C"], owner="carl"):  # other hosts stay free
            pass
    finally:
        release.set()
        holder.join()
    with locks.hold(["A", "B"], owner="ada"):  # released with its holder
        pass
    with pytest.raises(HostsBusy), locks.hold(["A"], owner="x"), locks.hold(["A"], owner="y"):
        pass


def test_open_range_creates_the_shards_and_sends_new_users_there(
    source: FileSource, tmp_path: Path
) -> None:
    old = Store(Topology.from_json(source.current("shards").document), catalog=CATALOG)
    note = old.objects("note").create(3, {"n": 1})
    plan = plan_open_range(
        source,
        open_store,
        count=16,
        master="B",
        master_address=f"sqlite://{tmp_path / 'B'}",
        replicas={"B2": f"sqlite://{tmp_path / 'B2'}"},
        author="ada",
    )
    assert plan.hosts == ("B",)
    assert plan.lines()[0] == "1. create databases db00016..db00031 and their tables  [B]"
    journal = MemoryJournal()
    execute(plan, tmp_path, journal)
    assert journal.entries[0].steps[0][2] == "16 shards ready on B"

    current = source.current("shards")
    assert (current.version, current.author) == (2, "ada")
    topology = Topology.from_json(current.document)
    assert topology.shard_count == 32 and topology.lookup_shards == 16
    assert topology.range_of(20).master == "B" and topology.range_of(20).replicas == ("B2",)
    assert topology.open_ranges == ((16, 31),)
    new = Store(topology, catalog=CATALOG)
    assert all(16 <= new.new_user_shard() <= 31 for _ in range(50))
    account = new.objects("account").create(new.new_user_shard(), {"login": "newcomer"})
    assert new.objects("account").get(account)["login"] == "newcomer"  # type: ignore[index]
    assert new.objects("note").get(note) == {"n": 1, "id": note}  # existing data untouched
    assert sorted(p.name for p in (tmp_path / "B").iterdir())[:1] == ["db00016.sqlite3"]
    old.close()
    new.close()


def test_open_range_refuses_hosts_in_the_map_and_stale_plans(
    source: FileSource, tmp_path: Path
) -> None:
    with pytest.raises(InvalidTopology, match="host A2 is in the map already"):
        plan_open_range(source, open_store, count=4, master="A2", master_address="sqlite:///x", author="a")  # fmt: skip
    plan = plan_open_range(
        source,
        open_store,
        count=4,
        master="C",
        master_address=f"sqlite://{tmp_path / 'C'}",
        author="a",
    )
    plan_close_range(source, first=0, last=7, author="bob").steps[0].run()  # someone else
    outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path), operator="a")
    assert not outcome.ok and "version 2 is current, not 1" in outcome.error
    assert source.current("shards").document["shard_count"] == 16


def test_close_range_keeps_one_open(source: FileSource, tmp_path: Path) -> None:
    execute(plan_close_range(source, first=4, last=7, author="ada"), tmp_path)
    assert source.current("shards").document["open"] == [[0, 3], [8, 15]]
    with pytest.raises(InvalidTopology, match="none for new users"):
        plan_close_range(source, first=0, last=15, author="ada")
    with pytest.raises(InvalidTopology, match="not open"):
        plan_close_range(source, first=5, last=6, author="ada")


def test_host_out_of_service_and_back(source: FileSource, tmp_path: Path) -> None:
    with pytest.raises(InvalidTopology, match="master of range"):
        plan_host_service(source, host="A", in_service=False, author="ada")
    execute(plan_host_service(source, host="A2", in_service=False, author="ada"), tmp_path)
    topology = Topology.from_json(source.current("shards").document)
    assert topology.out_of_service == ("A2",) and topology.range_of(0).replicas == ()
    with pytest.raises(InvalidTopology, match="out of service already"):
        plan_host_service(source, host="A2", in_service=False, author="ada")
    execute(plan_host_service(source, host="A2", in_service=True, author="ada"), tmp_path)
    assert Topology.from_json(source.current("shards").document).out_of_service == ()


def test_a_cache_server_joins_a_pool_empty(tmp_path: Path, memcached_server: Any) -> None:
    from pymemcache.client.base import Client

    from shardstore.control.cache_servers import plan_cache_server

    from .conftest import CACHE_POOLS

    source = FileSource(tmp_path / "config")
    pools = {name: ["10.0.2.1:11211"] for name in CACHE_POOLS}
    source.publish("caches", {"version": 0, "pools": pools}, author="setup", reason="first")
    server = memcached_server.address
    client = Client((memcached_server.host, memcached_server.port))
    # Stored before the plan runs (a set without reply could reach the server after it).
    client.set("v1:note:1", b"a value from before it left the pool", noreply=False)

    execute(
        plan_cache_server(source, pool="notes", server=server, add=True, author="ada"), tmp_path
    )
    try:
        assert client.get("v1:note:1") is None  # emptied before any process reads it
    finally:
        client.close()
    assert source.current("caches").document["pools"]["notes"] == ["10.0.2.1:11211", server]
    with pytest.raises(InvalidTopology, match="already in pool notes"):
        plan_cache_server(source, pool="notes", server=server, add=True, author="ada")

    plan = plan_cache_server(source, pool="notes", server=server, add=False, author="ada")
    execute(plan, tmp_path)
    assert source.current("caches").document["pools"]["notes"] == ["10.0.2.1:11211"]
    with pytest.raises(InvalidTopology, match="pool notes has no server"):
        plan_cache_server(source, pool="notes", server="10.0.2.1:11211", add=False, author="ada")
    client.close()
