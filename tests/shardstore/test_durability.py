"""A range's durability policy on real MariaDB (``shardstore durability``): ``degrade-after
N`` keeps a range taking writes when no replica acknowledges (after N seconds, once), and
the pair check says it is degraded until a replica is back; ``strict`` is the default; a
failover hands the policy to the promoted replica; and what the command refuses."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from shardstore import Topology
from shardstore.control.durability_change import plan_durability
from shardstore.control.emergency import plan_emergency_failover
from shardstore.control.failover import plan_failover
from shardstore.control.pairs import pair_health
from shardstore.durability import NO_FALLBACK_MS, Durability
from shardstore.exceptions import InvalidTopology
from tests.config_documents import eventually
from toolkit.servers.mariadb import MariaDBServer

from .replication import app_store, kill_master, root, sharded_pair
from .test_emergency_recovery import killed
from .test_reopen import cli
from .test_split import execute


def timeout_of(server: MariaDBServer) -> int:
    with root(f"mysql://{server.address}") as host:
        return int(host.value("SELECT @@global.rpl_semi_sync_master_timeout"))


def test_degrade_after_keeps_a_range_writable_with_no_replica_and_says_so(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    assert timeout_of(master) == NO_FALLBACK_MS  # strict: the default
    [healthy] = pair_health(source.current("shards").document, root)
    assert healthy.healthy and str(healthy.durability) == "strict"

    monkeypatch.setenv("SHARDSTORE_MYSQL_ADMIN", "root:")
    status, out = cli(tmp_path, "durability", "0-3", "degrade-after", "2")
    assert status == 0, out
    assert "durability of 0-3 (master A): strict -> degrade-after 2s" in out
    assert source.current("shards").document["ranges"][0]["durability"] == "degrade-after 2s"
    assert timeout_of(master) == 2000

    store = app_store(source)
    with root(f"mysql://{replica.address}") as r:
        r.stop_receiving()
    began = time.monotonic()
    store.objects("note").create(1, {"n": "waited, then committed alone"})
    first = time.monotonic() - began
    began = time.monotonic()
    store.objects("note").create(1, {"n": "asynchronous at once"})
    second = time.monotonic() - began
    assert 1.5 < first < 9 and second < 1, (first, second)
    [degraded] = pair_health(source.current("shards").document, root)
    assert any("degraded (degrade-after 2s)" in p for p in degraded.problems), degraded.problems

    with root(f"mysql://{replica.address}") as r:
        r.query("START SLAVE IO_THREAD")
    # Caught up, the replica acknowledges again and MariaDB waits for it by itself.
    assert eventually(lambda: pair_health(source.current("shards").document, root)[0].healthy, 20)
    store.close()


def test_a_failover_hands_the_policy_to_the_promoted_replica(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    execute(plan_durability(source, shards=(0, 3), policy="degrade-after 3", author="ada", connect=root), tmp_path)  # fmt: skip
    execute(plan_failover(source, host="A", author="ada", connect=root), tmp_path)
    document = source.current("shards").document
    assert Topology.from_json(document).ranges[0].durability == Durability(3)
    assert document["ranges"][0]["master"] == "B" and timeout_of(replica) == 3000
    [pair_now] = pair_health(document, root)
    assert pair_now.healthy, pair_now.problems

    # A master that lost the policy (restarted with its server's options) is given it again,
    # with nothing published; the policy in force on both is refused.
    with root(f"mysql://{replica.address}") as b:
        b.query(f"SET GLOBAL rpl_semi_sync_master_timeout = {NO_FALLBACK_MS}")
    assert any("not as its durability" in p for p in pair_health(document, root)[0].problems)
    plan = plan_durability(source, shards=(0, 3), policy="degrade-after 3", author="ada", connect=root)  # fmt: skip
    assert [step.name for step in plan.steps][-1].startswith("set B's semi-sync timeout")
    execute(plan, tmp_path)
    assert timeout_of(replica) == 3000 and source.current("shards").version == document["version"]
    with pytest.raises(InvalidTopology, match="is degrade-after 3s already"):
        plan_durability(source, shards=(0, 3), policy="degrade-after 3s", author="ada", connect=root)  # fmt: skip


REFUSED = [
    ((0, 2), "strict", "no range 0-2 in the shard map (its ranges: 0-3)"),
    ((0, 3), "lenient", "strict, or degrade-after N"),
    ((0, 3), "degrade-after 0", "degrades after 1..9 s"),
    ((0, 3), "degrade-after 30", "degrades after 1..9 s"),
    ((0, 3), "strict", "is strict already"),
]


def test_what_the_durability_command_refuses(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    for shards, policy, reason in REFUSED:
        with pytest.raises(InvalidTopology) as refused:
            plan_durability(source, shards=shards, policy=policy, author="ada", connect=root)
        assert reason in str(refused.value), (policy, refused.value)
    # Strict on a range with no replica: its master could take no write once it waited.
    document = source.current("shards").document
    unpaired = [{"range": [0, 3], "master": "A", "durability": "degrade-after 2s"}]
    source.publish("shards", {**document, "ranges": unpaired}, author="ada", reason="no replica")
    with pytest.raises(InvalidTopology, match="has no replica: strict"):
        plan_durability(source, shards=(0, 3), policy="strict", author="ada", connect=root)
    assert source.current("shards").version == document["version"] + 1
    assert timeout_of(master) == NO_FALLBACK_MS  # nothing was set


def test_an_emergency_failover_of_a_degrading_range_needs_the_data_loss_accepted(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    execute(plan_durability(source, shards=(0, 3), policy="degrade-after 2", author="ada", connect=root), tmp_path)  # fmt: skip
    kill_master(master, replica)
    # The replica received everything it was sent, but a degraded master committed alone.
    with pytest.raises(InvalidTopology, match="A's durability is degrade-after 2s: once no"):
        plan_emergency_failover(source, host="A", author="ada", fence=killed, connect=root)
    plan = plan_emergency_failover(
        source, host="A", author="ada", fence=killed, connect=root, accept_data_loss=True
    )
    assert "may have acknowledged writes no replica has" in plan.params["data_loss"]
    execute(plan, tmp_path)
    assert timeout_of(replica) == 2000  # the promoted replica degrades as its range says
