"""Rebuild, check and repair of the Redis follower graph from the MySQL mapping tables.

A small follow graph is written to the contract store (sqlite and mysql) through the
mapping tables; the Redis graph it implies is computed here independently (the oracle),
and after a sync every key of the Redis databases must equal it exactly, on the right
instance: no missing key, no stray key, no stray member, the MySQL sequences as scores.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from shardstore import Store, compose
from shardstore.redis_shards import RedisShards, RedisTopology
from social import notifications
from social.feeds import feed_key, seen_key
from social.graph import FollowerGraph, member
from social.graph_sync import sync_graph

from .graph_world import World, dump, expected_dump
from .vshard_users import USER as USER_TYPE


@pytest.fixture
def store(plain_store: Store) -> Store:
    """The graph is synced from the plain store, as the site does."""
    return plain_store


def two_instances(redis_db: Callable[[int], str]) -> RedisTopology:
    return RedisTopology.from_json(
        {
            "version": 1,
            "instances": {"r1": redis_db(1), "r2": redis_db(2)},
            "ranges": [
                {"range": [0, 4095], "instance": "r1"},
                {"range": [4096, 8191], "instance": "r2"},
            ],
        }
    )


@pytest.fixture
def graph(redis_shards: RedisShards) -> FollowerGraph:
    return FollowerGraph(redis_shards)


def assert_drift_repaired(world: World, graph: FollowerGraph, key: str) -> None:
    """A check reports ``key`` as drift; a repair makes the graph what MySQL says."""
    assert key in sync_graph(world.store, graph, repair=False).drift
    sync_graph(world.store, graph, repair=True)
    assert dump(graph) == expected_dump(world, graph)


@pytest.fixture
def world(store: Store) -> World:
    return World(store)


def client_of(world: World, graph: FollowerGraph, key: str) -> Any:
    return graph.shards.client(world.instance_of_key(graph, key))


def test_oracle_has_every_kind_of_key(world: World) -> None:
    expected = world.expected()
    assert {k.rsplit(":", 1)[1] for k in expected} == {
        "fe",
        "fre",
        "fi",
        "fri",
        "bf",
        "bu",
        "f",
        "u",
    }
    assert expected[f"u:{world.c}:fi"] == ("zset", {world.b: 1_700_000_000_000_150})
    assert expected[f"u:{world.b}:fri"] == (
        "zset",
        {world.c: 1_700_000_000_000_150, world.e: 1_700_000_000_000_250},
    )


def test_sync_on_an_empty_redis_builds_the_exact_graph(world: World, graph: FollowerGraph) -> None:
    steps: list[tuple[int, int]] = []
    report = sync_graph(
        world.store, graph, progress=lambda done, total: steps.append((done, total))
    )
    assert dump(graph) == expected_dump(world, graph)
    assert report.keys_repaired == len(world.expected())  # every key was missing
    assert report.keys_removed == 0
    assert steps[-1] == (16, 16) and len(steps) == 16
    again = sync_graph(world.store, graph)
    assert (again.keys_repaired, again.keys_removed, again.drift) == (0, 0, [])
    assert again.keys_checked == len(world.expected())
    # and the graph answers from it
    assert graph.follows_user(world.a, world.b)
    assert graph.follows_board(world.a, world.b1, world.b)
    assert not graph.follows_board(world.a, world.b2, world.b)
    assert graph.follows_board(world.c, world.b2, world.b)
    assert graph.board_follower_count(world.b1, world.b) == 2 + 2  # C, E explicit; A, D via B


def corrupt(world: World, graph: FollowerGraph) -> list[str]:
    """Drift of every kind; returns the graph keys touched."""
    a, b, c = world.a, world.b, world.c
    touched: dict[str, Callable[[Any, str], Any]] = {
        f"u:{a}:fe": lambda r, k: r.delete(k),  # a key lost
        f"u:{b}:fre": lambda r, k: r.zadd(
            k, {member(compose(3, USER_TYPE, 999)): 5}
        ),  # a stray member
        f"u:{c}:fi": lambda r, k: r.zadd(k, {member(b): 42}),  # a wrong score
        f"b:{world.b1}:f": lambda r, k: r.hset(k, member(c), "7"),  # a wrong hash value
        f"u:{a}:bu": lambda r, k: r.srem(k, member(world.b2)),  # a member lost (the key goes too)
        f"b:{world.b2}:u": lambda r, k: r.sadd(
            k, member(compose(3, USER_TYPE, 998))
        ),  # a stray member
        f"u:{b}:fri": lambda r, k: r.zrem(k, member(c)),  # a member lost
    }
    for key, change in touched.items():
        change(client_of(world, graph, key), key)
    stray = ["u:999:fe", f"b:{compose(4, 2, 77)}:f", f"u:{world.e}:bu"]
    first = next(iter(graph.shards.clients().values()))
    first.zadd(stray[0], {1: 1})
    first.hset(stray[1], "1", "1")
    graph.shards.client_for(world.e).sadd(stray[2], 5)
    return list(touched) + stray


def test_check_reports_drift_and_changes_nothing(world: World, graph: FollowerGraph) -> None:
    sync_graph(world.store, graph)
    touched = corrupt(world, graph)
    before = dump(graph, every=True)
    assert dump(graph) != expected_dump(world, graph)
    report = sync_graph(world.store, graph, repair=False)
    assert dump(graph, every=True) == before  # nothing changed
    assert set(report.drift) == set(touched)
    assert report.keys_repaired + report.keys_removed == len(touched)
    assert report.keys_removed == 3  # the stray keys MySQL does not explain
    # and a check with wipe=True changes nothing either
    sync_graph(world.store, graph, repair=False, wipe=True)
    assert dump(graph, every=True) == before


def test_repair_restores_exactly_the_mysql_state(world: World, graph: FollowerGraph) -> None:
    sync_graph(world.store, graph)
    touched = corrupt(world, graph)
    graph.shards.client_for(world.a).set("homefeed:x", "not graph")
    report = sync_graph(world.store, graph, repair=True)
    assert set(report.drift) == set(touched)
    assert dump(graph) == expected_dump(world, graph)
    assert graph.shards.client_for(world.a).get("homefeed:x") == b"not graph"
    clean = sync_graph(world.store, graph, repair=False)
    assert (clean.keys_repaired, clean.keys_removed, clean.drift) == (0, 0, [])


def test_repair_follows_mysql_changes(world: World, graph: FollowerGraph) -> None:
    sync_graph(world.store, graph)
    world.unfollow_user(world.e, world.a)  # E's only follow: u:E:fe and u:A:fre go
    world.follow_user(world.c, world.a, 1_700_000_000_000_900)
    world.follow_board(world.a, world.c1, 1_700_000_000_000_050)  # earlier than D's
    report = sync_graph(world.store, graph)
    assert dump(graph) == expected_dump(world, graph)
    assert f"u:{world.e}:fe" in report.drift and f"u:{world.a}:fre" in report.drift
    assert f"u:{world.e}:fe" not in dump(graph)[graph.shards.instance_for(world.e)]


def test_wipe_rebuilds_after_a_flush(world: World, graph: FollowerGraph) -> None:
    sync_graph(world.store, graph)
    for client in graph.shards.clients().values():
        client.flushdb()
    sync_graph(world.store, graph, wipe=True)
    assert dump(graph) == expected_dump(world, graph)
    corrupt(world, graph)
    graph.shards.client_for(world.a).set("seen:1", "1")
    sync_graph(world.store, graph, wipe=True)
    assert dump(graph) == expected_dump(world, graph)
    assert graph.shards.client_for(world.a).get("seen:1") == b"1"  # not a graph key


def test_repair_fixes_a_key_of_the_wrong_type(world: World, graph: FollowerGraph) -> None:
    """A graph key holding another Redis type (a bad manual fix, a foreign writer) is drift
    like any other: reported, and rewritten by a repair."""
    sync_graph(world.store, graph)
    key = f"u:{world.a}:fe"
    client_of(world, graph, key).set(key, "garbage")
    assert_drift_repaired(world, graph, key)


def test_repair_removes_a_key_left_on_the_wrong_instance(
    world: World, redis_db: Callable[[int], str]
) -> None:
    """After a virtual-shard move (or a bad copy), a user's key may linger on an instance
    that no longer holds that user: nobody reads it, it is drift, a repair removes it."""
    graph = FollowerGraph(RedisShards(two_instances(redis_db)))
    sync_graph(world.store, graph)
    key = f"u:{world.a}:fe"
    home = world.instance_of_key(graph, key)
    other = next(n for n in graph.shards.clients() if n != home)
    graph.shards.client(other).zadd(key, {world.b: 1})
    try:
        assert_drift_repaired(world, graph, key)
    finally:
        graph.shards.close()


def test_repair_removes_feed_keys_left_on_the_wrong_instance(
    world: World, redis_db: Callable[[int], str]
) -> None:
    """A pinner's home feed and visit mark on an instance that does not hold them (after a
    change of the map or of vshard_of) are removed; those where they belong stay."""
    graph = FollowerGraph(RedisShards(two_instances(redis_db)))
    sync_graph(world.store, graph)
    home = graph.shards.instance_for(world.a)
    other = next(n for n in graph.shards.clients() if n != home)
    for instance in (home, other):
        client = graph.shards.client(instance)
        client.rpush(feed_key(world.a), "1:1")
        client.set(seen_key(world.a), 1)
    try:
        report = sync_graph(world.store, graph, repair=False)
        assert sorted(report.drift) == sorted([feed_key(world.a), seen_key(world.a)])
        assert graph.shards.client(other).exists(feed_key(world.a))  # a check changes nothing
        sync_graph(world.store, graph)
        assert not graph.shards.client(other).exists(feed_key(world.a), seen_key(world.a))
        assert graph.shards.client(home).exists(feed_key(world.a), seen_key(world.a)) == 2
    finally:
        graph.shards.close()


def test_moving_virtual_shards_copies_switches_repairs_and_drops(
    world: World, redis_db: Callable[[int], str], tmp_path: Any
) -> None:
    """Half the virtual shards move from r1 to a new r2; a follow written to r1 between the
    copy and the switch reaches r2 through the repair from MySQL."""
    from shardstore.control.file_source import FileSource
    from shardstore.control.redis_move import plan_redis_move
    from social.redis_keys import REDIS_KEYS

    r1, r2 = redis_db(1), redis_db(2)
    source = FileSource(tmp_path / "config")
    single = RedisTopology.single(r1)
    document = {"version": 0, "instances": {"r1": r1}, "ranges": [{"range": [0, 8191], "instance": "r1"}]}  # fmt: skip
    source.publish("redis", document, author="setup", reason="one instance")
    before = FollowerGraph(RedisShards(single))
    sync_graph(world.store, before)
    old = before.shards.client("redis1")
    old.rpush(feed_key(world.b), "1:1")  # world.b is on the moving half, world.a is not
    old.rpush(feed_key(world.a), "2:2")
    old.zadd(notifications.list_key(world.b), {"like:1:2": 3})
    old.set(notifications.mark_key(world.b), 3)

    plan = plan_redis_move(
        source, world.store, first=4096, last=8191, instance="r2", url=r2, author="ada",
        keys=REDIS_KEYS, settle_seconds=0,
    )  # fmt: skip
    assert [step.name for step in plan.steps] == [
        "copy the keys of virtual shards 4096..8191 from r1 to r2",
        "publish redis map v2: virtual shards 4096..8191 on r2",
        "wait until every process follows redis map v2",
        "wait 0s for the work begun on the old map",
        "repair the graph keys of virtual shards 4096..8191 from MySQL",
        "delete the keys of virtual shards 4096..8191 from r1",
    ]
    plan.steps[0].run()
    # A follow made meanwhile by a process still on the old map: MySQL, then r1.
    world.follow_user(world.e, world.b, 1_700_000_000_000_999)
    before.edit().user_follow(world.e, world.b, True, 1_700_000_000_000_999).commit()
    for step in plan.steps[1:]:
        step.run()

    after = FollowerGraph(RedisShards(RedisTopology.from_json(source.current("redis").document)))
    try:
        assert dump(after) == expected_dump(world, after)
        assert after.shards.instance_for(world.b) == "r2"
        assert after.shards.client("r2").lrange(feed_key(world.b), 0, -1) == [b"1:1"]
        assert after.shards.client("r1").lrange(feed_key(world.a), 0, -1) == [b"2:2"]
        assert not after.shards.client("r1").exists(feed_key(world.b))
        moved = after.shards.client("r2")
        assert moved.zrange(notifications.list_key(world.b), 0, -1) == [b"like:1:2"]
        assert moved.get(notifications.mark_key(world.b)) == b"3"
        assert not after.shards.client("r1").exists(notifications.list_key(world.b))
    finally:
        after.shards.close()
        before.shards.close()


def test_the_library_command_moves_redis_keys_only_when_told_whose_they_are(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python -m shardstore redis-move`` knows no site's keys: it refuses without
    ``--redis-keys``, and with the social model's plans the move with its repair."""
    from shardstore.control.file_source import FileSource
    from tests.config_documents import shard_map
    from tests.shardstore.test_control_cli import cli

    monkeypatch.setenv("SHARDSTORE_JOURNAL", str(tmp_path / "journal.sqlite3"))
    spec = str(tmp_path / "config")
    # Published as they are: the command's publish would check the map's hosts first.
    source = FileSource(spec)
    source.publish("shards", shard_map(1), author="test", reason="first")
    redis = {"version": 0, "instances": {"r1": "memory://cli-1"}, "ranges": [{"range": [0, 8191], "instance": "r1"}]}  # fmt: skip
    source.publish("redis", redis, author="test", reason="one")
    source.close()
    move = ("redis-move", "0", "99", "r2", "--url", "memory://cli-2", "--dry-run")
    status, out = cli(spec, *move)
    assert status == 1 and "say what the site keeps in Redis (--redis-keys)" in out
    status, out = cli(spec, "--redis-keys", "social.redis_keys:REDIS_KEYS", *move)
    assert status == 0
    assert "5. repair the graph keys of virtual shards 0..99 from MySQL  [r2]" in out
    assert "dry run: nothing changed" in out
