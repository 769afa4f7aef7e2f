"""Redis killed and restarted empty: ``follower_graph rebuild`` brings the follower graph
and the home feeds back to exactly what MySQL implies, and ``check`` proves it; each
pinner's notifications come back from MySQL too (``rebuild_notifications``).

The site runs on a plane of this test's own (16 SQLite shards, local-memory pools, a
private redis-server it kills), so that every key in that Redis is the test's. Pinners
act through the site's actions (fan-out runs eagerly); ``check`` before the kill also
proves that those actions keep Redis equal to MySQL as they go.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.core.management import CommandError, call_command

from pinboard.boards.actions import create_board
from pinboard.catalog import CACHE_POOLS, CATALOG
from pinboard.data_plane import get_feeds, get_notifications, use
from pinboard.feeds.home import read_home
from pinboard.follows.actions import follow_board, follow_user, unfollow_board, unfollow_user
from pinboard.notifications.rebuild import rebuild_notifications
from pinboard.pins.actions import create_pin, delete_pin, save_pin
from pinboard.plane import DataPlane, build
from pinboard.users.actions import sign_up
from shardstore import Store, Topology, init_shards
from shardstore.cache import LocalPool
from shardstore.redis_shards import RedisTopology
from social.feeds import seen_key
from toolkit.images import image_upload
from toolkit.servers.redis import RedisServer


@pytest.fixture
def private_redis() -> Iterator[RedisServer]:
    availability = RedisServer.available()
    if not availability:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: Redis is required but {availability.reason}", pytrace=False)
        pytest.skip(f"Redis is not available: {availability.reason}")
    server = RedisServer().start()
    yield server
    server.stop()


@pytest.fixture
def plane(tmp_path: Path, private_redis: RedisServer) -> Iterator[DataPlane]:
    store = Store(
        Topology.single_host(f"sqlite://{tmp_path / 'shards'}", shard_count=16), catalog=CATALOG
    )
    init_shards(store)
    own = build(
        store,
        {name: LocalPool(name) for name in CACHE_POOLS},
        RedisTopology.single(private_redis.url),
    )
    previous = use(own)
    yield own
    use(previous)
    own.close()


def everything(client: Any) -> dict[str, Any]:
    """Every key of the Redis database with its contents (lists in order)."""
    found: dict[str, Any] = {}
    for raw in client.scan_iter(count=1000):
        key = raw.decode()
        kind = client.type(key).decode()
        if kind == "zset":
            found[key] = client.zrange(key, 0, -1, withscores=True)
        elif kind == "set":
            found[key] = sorted(client.smembers(key))
        elif kind == "hash":
            found[key] = client.hgetall(key)
        elif kind == "list":
            found[key] = client.lrange(key, 0, -1)
        else:
            found[key] = client.get(key)
    return found


def graph_keys(dump: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in dump.items() if k.startswith(("u:", "b:"))}


def run(*args: str) -> str:
    from io import StringIO

    out = StringIO()
    call_command("follower_graph", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_redis_killed_and_wiped_is_rebuilt_to_exactly_the_mysql_state(
    plane: DataPlane, private_redis: RedisServer
) -> None:
    names = ("ann", "bob", "cid", "dee", "eve", "fay")
    people = {n: sign_up(f"{n}_rb", f"{n}_rb@example.com", "plum-orchard-42") for n in names}
    ids = {n: p["id"] for n, p in people.items()}
    for person in ids.values():
        get_feeds().mark_seen(person)  # everyone visits: fan-out reaches them all
    boards = {
        (n, t): create_board(ids[n], t)["id"]
        for n in ("bob", "cid", "dee")
        for t in ("Soup", "Cake")
    }

    def pin(owner: str, title: str, text: str) -> int:
        return create_pin(ids[owner], boards[(owner, title)], image_upload(), text)["id"]

    early = [pin("bob", "Soup", "s1"), pin("cid", "Cake", "c1"), pin("dee", "Soup", "d1")]
    follow_user(ids["ann"], ids["bob"])  # a merge of bob's pins
    follow_user(ids["eve"], ids["bob"])
    follow_board(ids["ann"], boards[("cid", "Cake")])  # an implicit follow of cid
    follow_board(ids["fay"], boards[("dee", "Soup")])
    unfollow_board(ids["eve"], boards[("bob", "Cake")])  # a board unfollow
    later = [pin("bob", "Cake", "s2"), pin("bob", "Soup", "s3"), pin("cid", "Cake", "c2")]
    saved = save_pin(ids["ann"], early[2], create_board(ids["ann"], "Mine")["id"])["id"]
    follow_user(ids["cid"], ids["ann"])  # cid sees ann's save
    follow_user(ids["fay"], ids["cid"])
    unfollow_user(ids["fay"], ids["cid"])  # gone again, pins dropped
    delete_pin(ids["bob"], later[1])  # its entries stay in feeds, skipped on reads
    assert len(early + later) + 1 == len({*early, *later, saved})

    shown = {n: [p["id"] for p in read_home(i, limit=100)[0].pins] for n, i in ids.items()}
    assert shown["ann"][:3] == [saved, later[2], later[0]]
    assert later[1] not in shown["ann"]
    clean = run("check")  # the site's own writes keep Redis exact (else CommandError)
    assert f"home feeds: {len(names)} active feeds checked, would repair 0" in clean

    notified = {n: get_notifications().entries(i) for n, i in ids.items()}
    assert [e.kind for e in notified["bob"]] == ["follow", "follow"]  # eve, ann
    fays_follow = [e for e in notified["cid"] if e.actor_id == ids["fay"]]
    assert [e.kind for e in fays_follow] == ["follow"]  # kept after fay's unfollow
    client = redis.Redis.from_url(private_redis.url)
    before = everything(client)
    private_redis.halt(kill=True)
    private_redis.restart()  # no persistence: it comes back empty
    assert client.dbsize() == 0

    with pytest.raises(CommandError, match="differs from what MySQL implies"):
        run("check")
    out = run("rebuild")
    assert f"home feeds: {len(names)} feeds checked" in out

    after = everything(client)
    assert graph_keys(after) == graph_keys(before) != {}
    for n, person in ids.items():
        assert client.exists(seen_key(person))
        assert [p["id"] for p in read_home(person, limit=100)[0].pins] == shown[n]
    for key in (k for k in before if k.startswith("homefeed:")):
        deleted = str(later[1]).encode()
        assert after.get(key, []) == [e for e in before[key] if not e.startswith(deleted + b":")]
    assert run("check") == clean  # no CommandError: nothing differs

    assert all(get_notifications().entries(i) == [] for i in ids.values())
    for person in ids.values():
        assert rebuild_notifications(person)
    # All that MySQL still records comes back: fay's undone follow of cid does not.
    notified["cid"] = [e for e in notified["cid"] if e not in fays_follow]
    assert {n: get_notifications().entries(i) for n, i in ids.items()} == notified
    client.close()
