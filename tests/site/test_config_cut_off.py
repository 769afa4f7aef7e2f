"""A site process cut off from ZooKeeper past its lease (ZooKeeper halted): it writes MySQL
on by the last shard map it saw, and reads on; it refuses Redis writes (the follower graph,
home feeds, notifications: a Redis move has no other fence) and fills no cache (what it
reads by a map it cannot confirm stays its own) until ZooKeeper answers again, and its
home page still shows.

The process's plane follows a ZooKeeper of the test's own, on the ``servers`` plane's MariaDB
and Redis (so it runs once per ``make test``, with that plane).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client, override_settings

from pinboard import data_plane
from pinboard.data_plane import cached_store, follower_status, get_graph, plane, use
from pinboard.feeds.home import read_home
from pinboard.follows.actions import follow_user
from pinboard.users.queries import get_user
from pinboard.users.tokens import issue_token
from shardstore.control import follower as follower_module
from shardstore.control.sources import open_source
from shardstore.redis_shards import VSHARDS, RedisWritesRefused
from social.graph_sync import sync_graph
from tests.config_documents import eventually
from tests.site.conftest import SiteServers


@pytest.fixture
def zookeeper(
    private_zookeeper: Any,
    site_servers: SiteServers,
    tmp_path: Path,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Any]:
    """This process's plane following the servers' shard map and Redis from a ZooKeeper of
    its own (a short lease, so the test does not wait 8 s), then put back."""
    monkeypatch.setattr(follower_module, "LEASE_SECONDS", 1.5)
    spec = f"zk://{private_zookeeper.address}/cut-off"
    source = open_source(spec)
    try:
        source.publish(
            "shards", site_servers.topology.as_json(), author="test", reason="the servers'"
        )
        redis = {
            "version": 0,
            "instances": {"r1": site_servers.redis},
            "ranges": [{"range": [0, VSHARDS - 1], "instance": "r1"}],
        }
        source.publish("redis", redis, author="test", reason="the servers'")
    finally:
        source.close()
    config = {**settings.SHARDSTORE, "CONFIG": spec, "MIRROR_DIR": tmp_path / "mirror"}
    previous = use(None)
    try:
        with override_settings(SHARDSTORE=config):
            plane()
            yield private_zookeeper
    finally:
        current = use(previous)
        data_plane.stop_following()
        if current is not None:
            current.close()


def cut_off() -> str | None:
    status = follower_status()
    assert status is not None
    return status.cut_off


def test_cut_off_past_its_lease_the_site_writes_mysql_but_not_redis(
    zookeeper: Any, client: Client, make_user: Callable[..., dict[str, Any]]
) -> None:
    ann, bob = make_user("ann")["id"], make_user("bob")["id"]
    follow_user(ann, bob)
    dan = make_user("dan")
    token = issue_token(dan)["token"]
    assert get_graph().follows_user(ann, bob)

    zookeeper.halt()
    assert eventually(lambda: cut_off() is not None, 10)
    cara = make_user("cara")  # MySQL writes: acknowledged, and read back
    assert (get_user(cara["id"]) or {}).get("username") == cara["username"]
    users, key = cached_store().pools["users"], cached_store().objects("user").key(cara["id"])
    assert users.get_many([key]) == {}  # served, not cached
    with pytest.raises(RedisWritesRefused):
        follow_user(cara["id"], bob)  # MySQL first, then the graph: as if Redis were down
    assert cached_store().mapping("user_follows_users").contains(cara["id"], bob)
    assert not get_graph().follows_user(cara["id"], bob)  # until a repair (below)
    read_home(ann)  # the home page reads on: the visit is not noted, that is all
    response = client.put(f"/api/v1/users/{bob}/follow", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 503 and response["Retry-After"] == "5"  # retried: not a 500

    zookeeper.restart()
    assert eventually(lambda: cut_off() is None, 30)
    assert get_user(cara["id"]) is not None
    assert key in users.get_many([key])  # cached again
    follow_user(cara["id"], ann)  # Redis writes again
    assert get_graph().follows_user(cara["id"], ann)
    # What `follower_graph repair` does, for these: the graph again equal to MySQL (dan's
    # follow reached MySQL before its 503, as cara's did).
    owners = (cara["id"], dan["id"], bob)
    sync_graph(cached_store().store, get_graph(), owners=lambda owner: owner in owners)
    assert get_graph().follows_user(cara["id"], bob) and get_graph().follows_user(dan["id"], bob)
    report = sync_graph(
        cached_store().store, get_graph(), repair=False, owners=lambda o: o in owners
    )
    assert (report.keys_repaired, report.drift) == (0, [])
