"""A range with two replicas, on real MariaDB semi-synchronous replication: either
replica's acknowledgement releases a commit, so one replica's death costs no write; a
failover promotes one replica and the other follows it; a split leaves the host its
other replica; a rebuild adds a replica beside the one that acknowledges meanwhile."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from shardstore import InvalidTopology, Store, Topology
from shardstore.control.config_source import ConfigSource
from shardstore.control.emergency import plan_emergency_failover
from shardstore.control.failover import plan_failover
from shardstore.control.locks import FileLocks
from shardstore.control.mysql_hosts import HostError
from shardstore.control.pairs import pair_health
from shardstore.control.plans import MemoryJournal, Plan, run
from shardstore.control.rebuild import plan_rebuild
from shardstore.control.split import plan_split
from tests.config_documents import eventually
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CATALOG
from .replication import APP_LOGIN, app_store, kill_master, root, sharded_pair, wait_caught_up

Trio = tuple[MariaDBServer, MariaDBServer, MariaDBServer]


def fenced(host: str, address: str) -> str:
    return f"{host} was killed"


def ran(plan: Plan, tmp_path: Path) -> None:
    outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path / "locks"), operator="ada")  # fmt: skip
    assert outcome.ok, outcome.error


def topology_of(source: ConfigSource) -> Topology:
    return Topology.from_json(source.current("shards").document)


def address(server: MariaDBServer) -> str:
    return f"mysql://{server.address}"


def follows(server: MariaDBServer, master: MariaDBServer) -> bool:
    with root(address(server)) as s:
        status = s.replica_status()
    return status is not None and status.healthy and status.source == master.address


def test_one_replica_killed_costs_its_master_no_write(trio: Trio, tmp_path: Path) -> None:
    master, b, c = trio
    source = sharded_pair(master, b, c, tmp_path=tmp_path)
    store = app_store(source)
    store.objects("note").create(0, {"n": 0})
    c.halt(kill=True)
    started = time.monotonic()
    written = [store.objects("note").create(n % 4, {"n": n}) for n in range(1, 20)]
    assert time.monotonic() - started < 5  # B acknowledged each: none waited for C
    with root(address(master)) as m:
        semi = m.semi_sync()
    assert semi.kept and not semi.degraded
    wait_caught_up(master, b)
    [health] = pair_health(source.current("shards").document, root)
    assert [(r.name, r.healthy) for r in health.replicas] == [("B", True), ("C", False)]
    assert not health.healthy and health.under_replicated
    assert any(problem.startswith("C cannot be asked") for problem in health.problems)
    assert len(store.objects("note").get_many(written)) == 19
    store.close()


def test_a_healthy_range_with_two_replicas_is_fully_replicated(trio: Trio, tmp_path: Path) -> None:
    master, b, c = trio
    source = sharded_pair(master, b, c, tmp_path=tmp_path)
    [health] = pair_health(source.current("shards").document, root)
    assert health.healthy and not health.under_replicated, health.problems
    assert "A -> B, C (strict): healthy" in health.text()


def test_a_planned_failover_promotes_one_replica_and_the_other_follows_it(
    trio: Trio, tmp_path: Path
) -> None:
    master, b, c = trio
    source = sharded_pair(master, b, c, tmp_path=tmp_path)
    store = app_store(source)
    written = [store.objects("note").create(n % 4, {"n": n}) for n in range(20)]
    store.close()
    with pytest.raises(InvalidTopology, match="X is not a replica of A"):
        plan_failover(source, host="A", author="ada", connect=root, to="X")
    plan = plan_failover(source, host="A", author="ada", connect=root, to="C", quiet_seconds=0.2)
    assert "make B, A replicate from C" in "\n".join(plan.lines())
    ran(plan, tmp_path)

    shards = topology_of(source).range_of(0)
    assert (shards.master, shards.replicas) == ("C", ("B", "A"))
    assert follows(b, c) and follows(master, c)
    new = Store(topology_of(source), catalog=CATALOG, backend_options=APP_LOGIN)
    after = new.objects("note").create(1, {"n": "after"})
    assert [n["n"] for n in new.objects("note").get_many(written)] == list(range(20))
    with root(address(c)) as r:
        assert r.semi_sync().kept and r.semi_sync().replicas == 2
    wait_caught_up(c, b)
    [health] = pair_health(source.current("shards").document, root)
    assert health.healthy and not health.under_replicated, health.problems
    assert new.objects("note").get(after) is not None
    new.close()


def test_an_emergency_failover_promotes_a_replica_and_the_other_acknowledges_at_once(
    trio: Trio, tmp_path: Path
) -> None:
    master, b, c = trio
    source = sharded_pair(master, b, c, tmp_path=tmp_path)
    store = app_store(source)
    acknowledged = [store.objects("note").create(n % 4, {"n": n}) for n in range(30)]
    store.close()
    kill_master(master, b)
    kill_master(master, c)  # C has noticed too
    plan = plan_emergency_failover(source, host="A", author="ada", fence=fenced, connect=root)
    promoted = plan.params["replica"]
    other, other_server = ("C", c) if promoted == "B" else ("B", b)
    assert f"6. make {other} replicate from {promoted} (GTID)" in "\n".join(plan.lines())
    ran(plan, tmp_path)

    shards = topology_of(source).range_of(0)
    assert (shards.master, shards.replicas) == (promoted, (other,))
    assert topology_of(source).out_of_service == ("A",)
    new_master = b if promoted == "B" else c
    assert follows(other_server, new_master)
    with root(address(new_master)) as r:  # no falling back: the other acknowledges
        semi = r.semi_sync()
    assert semi.kept and semi.replicas == 1
    new = Store(topology_of(source), catalog=CATALOG, backend_options=APP_LOGIN)
    assert [n["n"] for n in new.objects("note").get_many(acknowledged)] == list(range(30))
    new.objects("note").create(2, {"n": "after"})
    [health] = pair_health(source.current("shards").document, root)
    assert health.healthy and health.under_replicated, health.problems
    new.close()


def test_an_emergency_failover_with_a_silent_replica_may_lose_what_it_acknowledged(
    trio: Trio, tmp_path: Path
) -> None:
    master, b, c = trio
    source = sharded_pair(master, b, c, tmp_path=tmp_path)
    c.halt(kill=True)
    kill_master(master, b)
    with pytest.raises(HostError, match="C does not answer, and may have acknowledged writes of A that B lacks"):  # fmt: skip
        plan_emergency_failover(source, host="A", author="ada", fence=fenced, connect=root)
    plan = plan_emergency_failover(
        source, host="A", author="ada", fence=fenced, connect=root, accept_data_loss=True
    )
    assert "C does not answer" in plan.params["data_loss"]
    ran(plan, tmp_path)
    shards = topology_of(source).range_of(0)
    assert (shards.master, shards.replicas) == ("B", ("C",))  # named still: to be replaced
    [health] = pair_health(source.current("shards").document, root)
    assert any(problem.startswith("C cannot be asked") for problem in health.problems)


def test_a_split_leaves_the_host_its_other_replica(trio: Trio, tmp_path: Path) -> None:
    master, b, c = trio
    source = sharded_pair(master, b, c, tmp_path=tmp_path)
    ran(plan_split(source, host="A", author="ada", connect=root), tmp_path)

    topology = topology_of(source)
    assert (topology.range_of(0).master, topology.range_of(0).replicas) == ("A", ("C",))
    assert (topology.range_of(3).master, topology.range_of(3).replicas) == ("B", ())
    store = Store(topology, catalog=CATALOG, backend_options=APP_LOGIN)
    store.objects("note").create(0, {"n": "stays"})
    with root(address(master)) as m:
        assert m.semi_sync().kept  # C acknowledges A's commits, with no fallback
    store.objects("note").create(3, {"n": "moved"})
    with root(address(master)) as m:
        assert not m.acknowledges()  # its reverse stream from B acknowledges nothing
    with root(address(b)) as r:
        assert r.semi_sync().replicas == 0
    wait_caught_up(b, master)
    wait_caught_up(master, c)  # the reverse stream's writes are in A's binary log
    with root(address(c)) as r:
        assert r.value("SELECT COUNT(*) FROM db00003.notes WHERE data LIKE '%moved%'") == 1
    store.close()


def test_a_rebuild_beside_an_acknowledging_replica_never_holds_the_master(
    trio: Trio, tmp_path: Path
) -> None:
    master, b, c = trio
    source = sharded_pair(master, b, c, tmp_path=tmp_path)
    store = app_store(source)
    slowest: list[float] = []
    stop = threading.Event()

    def write() -> None:
        n = 0
        while not stop.is_set():
            started = time.monotonic()
            store.objects("note").create(n % 4, {"n": n})
            slowest.append(time.monotonic() - started)
            n += 1
            time.sleep(0.05)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        ran(plan_rebuild(source, host="C", author="ada", connect=root), tmp_path)
    finally:
        stop.set()
        writer.join(30)
    assert slowest and max(slowest) < 5, f"a write waited {max(slowest):.1f}s"
    assert topology_of(source).range_of(0).replicas == ("B", "C")
    with root(address(c)) as r:
        assert r.acknowledges()
    [health] = pair_health(source.current("shards").document, root)
    assert health.healthy and not health.under_replicated, health.problems
    store.close()


def test_a_split_whose_host_keeps_only_a_dead_replica_leaves_the_host_writable(
    trio: Trio, tmp_path: Path
) -> None:
    """With C dead, only B acknowledged A's commits: once B is split off, A's semi-sync is
    armed (it commits alone until a replica connects), not left waiting for C for ever."""
    master, b, c = trio
    source = sharded_pair(master, b, c, tmp_path=tmp_path)
    c.halt(kill=True)
    with root(address(master)) as m:  # once its heartbeat finds C gone
        assert eventually(lambda: m.semi_sync().replicas == 1, 30)
    ran(plan_split(source, host="A", author="ada", connect=root), tmp_path)
    assert topology_of(source).range_of(0).replicas == ("C",)  # named still, for pairs to see
    with root(address(master)) as m:
        assert m.semi_sync().falls_back
    store = app_store(source)
    started = time.monotonic()
    store.objects("note").create(0, {"n": "on A, C dead"})
    assert time.monotonic() - started < 5
    store.close()
