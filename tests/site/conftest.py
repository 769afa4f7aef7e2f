"""Fixtures for the site: one data plane per test run, and pinners made through actions.

``PINBOARD_TEST_PLANE`` says which data plane the site's tests run on:

* ``embedded`` (the default): the embedded default, with no server at all: 16
  SQLite shards in a temporary directory (settings.test), local-memory cache
  pools, an in-process Redis;
* ``servers``: the production shape, on private servers the run starts: 16
  shard databases on MariaDB over two hosts, memcached pools, the follower
  graph and home feeds on Redis, pinners' sessions and rate limits on Redis
  too (a database of their own). Under ``CI=true`` a missing server fails.

Celery runs tasks eagerly in both; the ``worker`` fixture starts a real worker
(``servers`` only: it shares the plane with another process). The plane
is shared by the whole run, like a real deployment; tests make their own
pinners with fresh names instead of expecting an empty store.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kombu.pools
import pytest
from django.conf import settings
from django.test import override_settings

from pinboard import celery_app
from pinboard.boards.actions import create_board
from pinboard.cache_backend import redis_cache
from pinboard.catalog import CACHE_POOLS, CATALOG
from pinboard.data_plane import cached_store, topology_from_settings, use
from pinboard.pins.actions import create_pin
from pinboard.pins.queries import board_pins_page
from pinboard.plane import DataPlane, build
from pinboard.search import plane as search_plane
from pinboard.search.index import SearchIndex
from pinboard.users.actions import sign_up
from shardstore import Store, Topology, init_shards
from shardstore.cache import CachePool, LocalMemory, LocalPool, MemcachePool
from shardstore.redis_shards import RedisTopology
from toolkit.images import image_upload
from toolkit.processes import HOST, free_port
from toolkit.site_processes import CeleryWorker

_names = itertools.count(1)


PLANES = ("embedded", "servers")
PLANE = os.environ.get("PINBOARD_TEST_PLANE", "embedded")
if PLANE not in PLANES:
    raise pytest.UsageError(f"PINBOARD_TEST_PLANE={PLANE!r}: expected one of {PLANES}")


#: The database of the run's Redis that holds the site's sessions and rate limits on the
#: ``servers`` plane (the shardstore suite's are 1-4, brokers' of site tests 14).
SESSIONS_REDIS_DB = 13


@dataclass(frozen=True)
class SiteServers:
    """Where the ``servers`` plane lives, for another process to join it."""

    topology: Topology
    memcached: str  # host:port
    redis: str  # redis:// URL
    search: str  # the search index's mysql:// URL
    sessions_redis: str  # redis:// URL of the Django caches' database (sessions, rate limits)


@pytest.fixture(scope="session")
def site_servers(request: pytest.FixtureRequest) -> SiteServers:
    """The servers of the ``servers`` plane; skips on the embedded plane, whose pools and
    Redis live inside this process."""
    if PLANE != "servers":
        pytest.skip("needs the site on servers: run with PINBOARD_TEST_PLANE=servers")
    mariadb = request.getfixturevalue("site_mariadb_server")
    memcached = request.getfixturevalue("site_memcached_server")
    redis = request.getfixturevalue("redis_server")  # database 0 is the site's
    address = f"mysql://root@{mariadb.host}:{mariadb.port}"
    search = f"{address}/pinboard_search"  # a database of its own, beside the shards'
    sessions = f"redis://{redis.host}:{redis.port}/{SESSIONS_REDIS_DB}"
    return SiteServers(
        two_host_topology(address, address), memcached.address, redis.url, search, sessions
    )


def two_host_topology(address_a: str, address_b: str) -> Topology:
    """16 shards, [0, 7] on one host and [8, 15] on another, as in production."""
    return Topology.from_json(
        {
            "version": 1,
            "shard_count": 16,
            "hosts": {"MySQL001A": address_a, "MySQL002A": address_b},
            "ranges": [
                {"range": [0, 7], "master": "MySQL001A"},
                {"range": [8, 15], "master": "MySQL002A"},
            ],
            "open": [[0, 15]],
            "lookup_shards": 16,
        }
    )


@pytest.fixture(scope="session", autouse=True)
def data_plane(request: pytest.FixtureRequest) -> Iterator[DataPlane]:
    """The site's data plane for the run: embedded, or on servers (``PINBOARD_TEST_PLANE``)."""
    pools: dict[str, CachePool]
    if PLANE == "servers":
        servers: SiteServers = request.getfixturevalue("site_servers")
        store = Store(servers.topology, catalog=CATALOG)
        pools = {name: MemcachePool(name, [servers.memcached]) for name in CACHE_POOLS}
        redis_topology = RedisTopology.single(servers.redis)
    else:
        store = Store(topology_from_settings(), catalog=CATALOG)
        memory = LocalMemory()  # the pools share it, as on the embedded default
        pools = {name: LocalPool(name, memory) for name in CACHE_POOLS}
        redis_topology = RedisTopology.single("memory://site-tests")
    init_shards(store)
    plane = build(store, pools, redis_topology)
    previous = use(plane)
    yield plane
    use(previous)
    plane.close()


def process_env(tmp_path: Path, site_servers: SiteServers, **extra: str) -> dict[str, str]:
    """The environment of a site process (a worker, a gunicorn) on this run's servers and
    the shard map this process serves, with ``extra`` variables."""
    topology = tmp_path / "topology.json"
    topology.write_text(json.dumps(cached_store().topology.as_json()))
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "pinboard.settings.dev",
        "PINBOARD_VAR_DIR": str(tmp_path / "var"),
        "PINBOARD_TOPOLOGY": str(topology),
        "PINBOARD_REDIS_URL": site_servers.redis,
        "PINBOARD_MEMCACHED": site_servers.memcached,
        "PINBOARD_SEARCH_URL": site_servers.search,
        **extra,
    }


@pytest.fixture
def worker_metrics() -> str:
    """Where the ``worker`` serves its metrics."""
    return f"{HOST}:{free_port()}"


@pytest.fixture
def worker(
    tmp_path: Path,
    site_servers: SiteServers,
    redis_server: Any,
    data_plane: DataPlane,
    worker_metrics: str,
) -> Iterator[Path]:
    """A `celery worker` process on the same shards, Redis and memcached as this process,
    logging JSON lines as in production and serving its metrics at ``worker_metrics``;
    this process queues to it. Yields its log."""
    broker = f"redis://{redis_server.host}:{redis_server.port}/15"
    env = process_env(
        tmp_path,
        site_servers,
        PINBOARD_BROKER_URL=broker,
        PINBOARD_LOG_FORMAT="json",
        PINBOARD_METRICS_BIND=worker_metrics,
        PROMETHEUS_MULTIPROC_DIR=str(tmp_path),
    )
    process = CeleryWorker(env, tmp_path / "worker.log").start()
    eager, previous_broker = celery_app.conf.task_always_eager, celery_app.conf.broker_url
    celery_app.conf.task_always_eager = False
    use_broker(broker)
    try:
        yield process.log
    finally:
        celery_app.conf.task_always_eager = eager
        use_broker(previous_broker)
        process.stop()


def use_broker(url: str) -> None:
    """Point this process's Celery app at the broker ``url``, with new connections.

    Celery keeps the connection and producer pools of the broker it first used, and kombu
    keeps every pool in process-wide groups keyed by broker URL, where a pool once closed
    stays and is handed out again ("Acquire on closed pool"). So close and forget kombu's
    pools, then Celery's references to them: the next task opens new ones for ``url``.
    """
    celery_app.conf.broker_url = url
    kombu.pools.reset()
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@pytest.fixture(scope="session", autouse=True)
def django_caches(request: pytest.FixtureRequest) -> Iterator[None]:
    """Sessions and rate limits on the run's Redis on ``servers`` (as production keeps them:
    settings.base), in process memory on the embedded plane (settings.test)."""
    if PLANE != "servers":
        yield
        return
    servers: SiteServers = request.getfixturevalue("site_servers")
    on_redis = override_settings(
        CACHES={
            **settings.CACHES,
            **{
                name: redis_cache(servers.sessions_redis, name)
                for name in ("sessions", "ratelimit")
            },
        }
    )
    on_redis.enable()
    yield
    on_redis.disable()


@pytest.fixture(scope="session", autouse=True)
def search_index(request: pytest.FixtureRequest) -> Iterator[SearchIndex]:
    """The run's search index: SQLite FTS5 (settings.test: a file in the run's temporary
    directory) on the embedded plane, InnoDB FULLTEXT in a database of the site's MariaDB
    on servers."""
    if PLANE == "servers":
        servers: SiteServers = request.getfixturevalue("site_servers")
        index = search_plane.open_index(servers.search)
    else:
        index = search_plane.open_index(settings.SEARCH_URL)
    previous = search_plane.use(index)
    yield index
    search_plane.use(previous)
    index.close()


@pytest.fixture(autouse=True)
def control_database(db: None) -> None:
    """Every site test may reach the control database (staff accounts, the journal), in a
    transaction rolled back after it. Once one test has opened it (the console's do), a
    later request that ends outside the test client (a streamed file, schemathesis's WSGI
    calls) has Django check that connection, which pytest-django refuses without this."""


@pytest.fixture(scope="session")
def site_store(data_plane: DataPlane) -> Any:
    return data_plane.store


@pytest.fixture
def make_user(site_store: Store) -> Callable[..., dict[str, Any]]:
    """Sign up a pinner with a fresh name: ``make_user("ada")`` -> user dict (password
    "plum-orchard-42"); ``shard=`` places them there instead of on a random open shard."""

    def make(name: str = "pinner", *, shard: int | None = None) -> dict[str, Any]:
        n = next(_names)
        if shard is None:
            return sign_up(f"{name}_{n}", f"{name}_{n}@example.com", "plum-orchard-42")
        # A test that needs pinners spread out says where.
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cached_store().store, "new_user_shard", lambda: shard)
            return sign_up(f"{name}_{n}", f"{name}_{n}@example.com", "plum-orchard-42")

    return make


@pytest.fixture
def cast(make_user: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """ann owns a board "Recipes" with two pins; bob is another pinner with a board."""
    ann, bob = make_user("ann"), make_user("bob")
    recipes = create_board(ann["id"], "Recipes")
    for n in range(2):
        create_pin(ann["id"], recipes["id"], image_upload(), f"Recipes pin {n}")
    bobs = create_board(bob["id"], "Bob things")
    pin_id = board_pins_page(recipes["id"]).ids[0]
    return {"ann": ann, "bob": bob, "recipes": recipes, "bobs": bobs, "pin": pin_id}
