"""Fixtures for the site: one data plane per test run, and pinners made through actions.

The shard store (settings.test: 16 SQLite shards in a temporary directory) sits
behind cache pools on the private memcached of the run, and the follower graph
and home feeds live on its private Redis, as in production. Without those
servers (outside CI) the site falls back to its embedded default: local-memory
pools and an in-process Redis. Everything is shared by the whole run, like a
real deployment; tests make their own pinners with fresh names instead of
expecting an empty store.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from pinboard.boards.actions import create_board
from pinboard.pins.actions import create_pin
from pinboard.pins.queries import board_pins_page
from pinboard.store import POOLS, DataPlane, build, topology_from_settings, use
from pinboard.users.actions import sign_up
from shardstore import Store, init_shards
from shardstore.cache import CachePool, LocalPool, MemcachePool
from shardstore.redis_shards import RedisTopology

_names = itertools.count(1)


@pytest.fixture(scope="session", autouse=True)
def data_plane(request: pytest.FixtureRequest) -> Iterator[DataPlane]:
    """The site's data plane on the run's real memcached and Redis (or the embedded default)."""
    store = Store(topology_from_settings())
    init_shards(store)
    try:
        memcached = request.getfixturevalue("memcached_server")
        redis = request.getfixturevalue("redis_server")
    except pytest.skip.Exception:  # not installed here (under CI=true that is a failure)
        pools: dict[str, CachePool] = {name: LocalPool(name) for name in POOLS}
        redis_topology = RedisTopology.single("memory://site-tests")
    else:
        pools = {name: MemcachePool(name, [memcached.address]) for name in POOLS}
        redis_topology = RedisTopology.single(redis.url)
    plane = build(store, pools, redis_topology)
    previous = use(plane)
    yield plane
    use(previous)
    plane.close()


@pytest.fixture(scope="session")
def site_store(data_plane: DataPlane) -> Any:
    return data_plane.store


@pytest.fixture
def make_user(site_store: Store) -> Callable[..., dict[str, Any]]:
    """Sign up a pinner with a fresh name: ``make_user("ada")`` -> user dict (password "plum-orchard-42")."""

    def make(name: str = "pinner") -> dict[str, Any]:
        n = next(_names)
        return sign_up(f"{name}_{n}", f"{name}_{n}@example.com", "plum-orchard-42")

    return make


def image_file(
    name: str = "pin.png", *, size: tuple[int, int] = (40, 30), fmt: str = "PNG"
) -> SimpleUploadedFile:
    """A real image, drawn in memory."""
    out = io.BytesIO()
    Image.new("RGB", size, (200, 40, 90)).save(out, fmt)
    return SimpleUploadedFile(name, out.getvalue(), content_type=f"image/{fmt.lower()}")


@pytest.fixture
def image() -> SimpleUploadedFile:
    return image_file()


@pytest.fixture
def cast(make_user: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """ann owns a board "Recipes" with two pins; bob is another pinner with a board."""
    ann, bob = make_user("ann"), make_user("bob")
    recipes = create_board(ann["id"], "Recipes")
    for n in range(2):
        create_pin(ann["id"], recipes["id"], image_file(), f"Recipes pin {n}")
    bobs = create_board(bob["id"], "Bob things")
    pin_id = board_pins_page(recipes["id"]).ids[0]
    return {"ann": ann, "bob": bob, "recipes": recipes, "bobs": bobs, "pin": pin_id}
