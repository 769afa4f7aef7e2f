"""The social model's long-job kinds: registered through the library's registry, each
chunk run alone and again harmlessly (the graph rebuild here; the feed rebuild in
test_feed_sync.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

import social.jobs  # noqa: F401 - registers the kinds
from shardstore import Store
from shardstore.ids import shard_of
from shardstore.jobs import Chunk, JobContext, kind, kinds
from shardstore.redis_shards import RedisShards, RedisTopology
from social.graph import FollowerGraph, member
from social.graph_sync import sync_graph
from tests.shardstore.test_jobs import run_all, total

from .test_graph_sync import World, corrupt, dump, expected_dump, two_instances


def test_the_social_kinds_register_with_the_library() -> None:
    assert {"reconcile", "graph-rebuild", "feed-rebuild"} <= set(kinds())


@pytest.fixture(params=["one", "two"])
def graph(
    request: pytest.FixtureRequest, redis_db: Callable[[int], str]
) -> Iterator[FollowerGraph]:
    topology = RedisTopology.single(redis_db(3)) if request.param == "one" else two_instances(redis_db)  # fmt: skip
    shards = RedisShards(topology)
    yield FollowerGraph(shards)
    shards.close()


def test_graph_rebuild_chunks_rewrite_each_shards_pinners_and_a_second_run_finds_nothing(
    plain_store: Store, graph: FollowerGraph
) -> None:
    world = World(plain_store)
    sync_graph(plain_store, graph)
    touched = corrupt(world, graph)  # drift of every kind, and three stray keys
    strays_of_no_object = touched[-3:]  # IDs with no user or board row: a full sync's work
    # A pinner and a board that exist, on shard 5, with keys MySQL does not explain.
    ivy = plain_store.objects("user").create(5, {"username": "ivy"})
    board = plain_store.objects("board").create(5, {"owner_id": ivy, "name": "b"})
    home = graph.shards.client_for(ivy)
    home.zadd(f"u:{ivy}:fe", {member(world.a): 1})
    home.hset(f"b:{board}:f", member(world.a), 1)
    context = JobContext(plain_store, lambda: graph.shards)

    check = run_all("graph-rebuild", context, check=True)
    assert total(check, "keys_repaired") == len(touched) - 3  # the drifted keys
    assert home.exists(f"u:{ivy}:fe")  # a check deletes nothing

    on_5 = kind("graph-rebuild").run_chunk(context, Chunk(5, 5), {})
    assert on_5["keys_removed"] == 2 and not home.exists(f"u:{ivy}:fe", f"b:{board}:f")

    first = run_all("graph-rebuild", context, per_chunk=4)
    assert total(first, "keys_repaired") == len(touched) - 3
    wanted, found = expected_dump(world, graph), dump(graph)
    for instance, keys in found.items():
        left = {k: v for k, v in keys.items() if k not in strays_of_no_object}
        assert left == wanted[instance]

    again = run_all("graph-rebuild", context)
    assert (total(again, "keys_repaired"), total(again, "keys_removed")) == (0, 0)
    assert total(again, "keys_checked") == len(world.expected())
    assert shard_of(ivy) == 5
