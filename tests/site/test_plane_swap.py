"""The process's data plane follows its config documents: a new shard map, Redis map or set of
cache pools is swapped in whole, and a request in flight keeps the plane it began with. A
process on an in-process Redis derives the follower graph from the store at its start."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from pinboard import data_plane
from pinboard.catalog import CATALOG
from pinboard.data_plane import bound, cached_store, get_feeds, get_graph, plane, use
from pinboard.follows.actions import follow_user
from pinboard.users.actions import sign_up
from shardstore import Store, Topology, init_shards
from shardstore.cache import LocalPool
from shardstore.control.file_source import FileSource
from tests.config_documents import eventually, sqlite_shard_map


@pytest.fixture
def followed(tmp_path: Path, settings: Any) -> Iterator[FileSource]:
    """This process's plane built from a config directory of its own, then put back."""
    source = FileSource(tmp_path / "config")
    source.publish(
        "shards", sqlite_shard_map(tmp_path / "shards", open_to=15), author="test", reason="first"
    )
    init_shards(Store(Topology.from_json(source.current("shards").document), catalog=CATALOG))
    config = {
        **settings.SHARDSTORE,
        "CONFIG": str(tmp_path / "config"),
        "MIRROR_DIR": tmp_path / "mirror",
    }
    previous = use(None)
    try:
        with override_settings(SHARDSTORE=config):
            plane()
            yield source
    finally:
        current = use(previous)
        data_plane.stop_following()
        if current is not None:
            current.close()


def test_a_new_shard_map_is_swapped_in_and_a_request_in_flight_keeps_its_own(
    followed: FileSource, tmp_path: Path
) -> None:
    assert plane().versions == {"shards": 1}
    with bound() as request_plane:
        followed.publish(
            "shards",
            sqlite_shard_map(tmp_path / "shards", open_to=3),
            author="ops",
            reason="close 4..15",
        )
        assert eventually(lambda: data_plane.PLANES.in_force().versions["shards"] == 2)
        # This "request" still routes by version 1, from first query to last.
        assert cached_store().topology.version == 1 and plane() is request_plane
        assert cached_store().topology.open_ranges == ((0, 15),)
    assert cached_store().topology.version == 2 and plane().versions == {"shards": 2}
    assert all(cached_store().new_user_shard() <= 3 for _ in range(30))


def test_new_cache_pools_and_redis_maps_are_swapped_in(followed: FileSource) -> None:
    before_store, before_feeds = cached_store(), get_feeds()
    pools = {name: ["local"] for name in ("users", "boards", "pins", "lists")}
    followed.publish("caches", {"version": 0, "pools": pools}, author="ops", reason="pools")
    assert eventually(lambda: plane().versions.get("caches") == 1)
    assert cached_store() is not before_store and isinstance(
        cached_store().pools["pins"], LocalPool
    )
    assert cached_store().store is before_store.store  # one shard store: its connections stay

    redis = {"version": 0, "instances": {"r9": "memory://swap-test"}, "ranges": [{"range": [0, 8191], "instance": "r9"}]}  # fmt: skip
    followed.publish("redis", redis, author="ops", reason="another instance")
    assert eventually(lambda: plane().versions.get("redis") == 1)
    assert get_feeds() is not before_feeds
    assert set(get_feeds().shards.clients()) == {"r9"}


def test_a_process_on_an_in_process_redis_derives_the_graph_from_the_store_at_its_start(
    followed: FileSource,
) -> None:
    ann = sign_up("ann_start", "ann_start@example.com", "plum-orchard-42")["id"]
    bob = sign_up("bob_start", "bob_start@example.com", "plum-orchard-42")["id"]
    follow_user(ann, bob)
    for client in get_graph().shards.clients().values():
        client.flushall()  # as a new process finds it
    assert not get_graph().follows_user(ann, bob)

    data_plane.stop_following()
    first = use(None)
    assert first is not None
    first.close()
    data_plane.start()  # as a new server process does
    assert get_graph().follows_user(ann, bob)
