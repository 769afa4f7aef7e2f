"""Planned failover on real MariaDB GTID replication: a master hands its shards to its
replica, nothing written before is lost, and a process still on the old map cannot write."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardstore import InvalidTopology, ShardReadOnly, Store, Topology, init_shards
from shardstore.control.failover import plan_emergency_failover, plan_failover
from shardstore.control.file_source import FileSource
from shardstore.control.plans import FileLocks, MemoryJournal, run
from tests.config_documents import eventually
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CATALOG
from .replication import APP_LOGIN, publish_pair, root


def test_planned_failover_moves_the_master_and_loses_nothing(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)
    old = Store(
        Topology.from_json(source.current("shards").document),
        catalog=CATALOG,
        backend_options=APP_LOGIN,
    )
    init_shards(old)  # on A; B gets the databases by replication
    written = [old.objects("pin").create(n % 4, {"n": n}) for n in range(20)]
    old.mapping("board_has_pins").add(old.objects("board").create(1, {}), written[1])

    plan = plan_failover(source, host="A", author="ada", connect=root, quiet_seconds=0.2)
    assert [line.split("  [")[0] for line in plan.lines()] == [
        "1. check B replicates from A and is caught up",
        "2. set read_only on A; no write lands for 0.2s",
        "3. wait until B has applied all of A's writes (GTID)",
        "4. publish shard map v2: shards 0..3 mastered by B",
        "5. stop replication on B and clear its read_only",
        "6. make A replicate from B",
    ]
    journal = MemoryJournal()
    outcome = run(plan, journal=journal, locks=FileLocks(tmp_path / "locks"), operator="ada")
    assert outcome.ok, outcome.error
    assert len(journal.entries[0].steps) == 6

    topology = Topology.from_json(source.current("shards").document)
    assert topology.range_of(0).master == "B" and topology.range_of(0).replica == "A"
    new = Store(topology, catalog=CATALOG, backend_options=APP_LOGIN)
    assert [p["n"] for p in new.objects("pin").get_many(written)] == list(range(20))  # all there
    after = new.objects("pin").create(2, {"n": "after"})
    with root(f"mysql://{master.address}") as m, root(f"mysql://{replica.address}") as r:
        assert m.read_only() and not r.read_only()
        assert r.replica_status() is None
        status = m.replica_status()
        assert status is not None and status.healthy and status.source == replica.address
    # A process still on the old map is fenced: its write is refused, typed, not lost silently.
    with pytest.raises(ShardReadOnly, match="read_only"):
        old.objects("pin").create(2, {"n": "stale"})
    # The old master follows the new one.
    on_a = Store(
        Topology.from_json({**topology.as_json(), "ranges": [{"range": [0, 3], "master": "A"}]}),
        catalog=CATALOG,
        backend_options=APP_LOGIN,
    )
    assert eventually(lambda: on_a.objects("pin").get(after) is not None, 10)
    on_a.close()
    old.close()
    new.close()


def test_failover_refuses_a_replica_that_is_not_following(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    with root(f"mysql://{replica.address}") as r:
        r.stop_replicating()
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)
    plan = plan_failover(source, host="A", author="ada", connect=root)
    outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path), operator="ada")
    assert not outcome.ok and "B does not replicate from A" in outcome.error
    assert source.current("shards").version == 1
    with root(f"mysql://{master.address}") as m:
        assert not m.read_only()  # the check comes first: nothing was frozen


def test_emergency_failover_promotes_the_replica_with_every_acknowledged_write(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)
    with pytest.raises(InvalidTopology, match="A answers: fail it over as planned"):
        plan_emergency_failover(source, host="A", author="ada", connect=root)

    old = Store(
        Topology.from_json(source.current("shards").document),
        catalog=CATALOG,
        backend_options=APP_LOGIN,
    )
    init_shards(old)
    acknowledged = [old.objects("pin").create(n % 4, {"n": n}) for n in range(50)]
    master.halt(kill=True)  # kill -9: no goodbye to the replica

    plan = plan_emergency_failover(source, host="A", author="ada", connect=root)
    assert [line.split("  [")[0] for line in plan.lines()][0::3] == [
        "1. confirm A does not answer",
        "4. publish shard map v2: shards 0..3 mastered by B; A out of service",
    ]
    outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path), operator="ada")
    assert outcome.ok, outcome.error

    topology = Topology.from_json(source.current("shards").document)
    assert topology.range_of(0).master == "B" and topology.range_of(0).replica is None
    assert topology.out_of_service == ("A",)
    new = Store(topology, catalog=CATALOG, backend_options=APP_LOGIN)
    assert [p["n"] for p in new.objects("pin").get_many(acknowledged)] == list(range(50))
    new.objects("pin").create(1, {"n": "after"})

    # The old master comes back: read_only, so a process still on the old map is refused.
    master.restart()
    with root(f"mysql://{master.address}") as m:
        assert m.read_only()
    with pytest.raises(ShardReadOnly, match="read_only"):
        old.objects("pin").create(1, {"n": "stale"})
    old.close()
    new.close()
