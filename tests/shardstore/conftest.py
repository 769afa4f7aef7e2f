"""Fixtures of the shardstore contract suite: one suite, run over every store.

``store`` is each implementation of ``StoreInterface`` in turn: the plain Store
and a CachedStore in front of it (see ``store``), over each backend. The plain
Store (``plain_store``) has a 16-shard topology split across two hosts
(shards 0..7 on host A, 8..15 on host B):

* sqlite: two directories under the test's tmp_path, fresh per test (copies of
  a pair initialized once per session);
* mysql: two host names that both point at the session's private MariaDB.
  The 16 shard databases are created once per session; before each test the
  tables a previous test wrote to are found with one probe query and
  truncated, so every test starts from empty tables (and auto-increment 1).

No Django is needed here (run with ``-p no:django``).
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

from shardstore import Catalog, Store, Topology, init_shards
from shardstore.cache import CachedStore, LocalPool
from shardstore.control import documents
from shardstore.control.config_source import ConfigSource
from shardstore.control.file_source import FileSource
from shardstore.control.sources import open_source
from shardstore.interface import StoreInterface
from toolkit.processes import free_port

from .catalog import CACHE_POOLS, CATALOG
from .replication import pair, trio  # noqa: F401 - replicated servers, for the operations' tests

BACKENDS = ["sqlite", "mysql"]
SHARD_COUNT = 16
HOST_A, HOST_B = "MySQL001A", "MySQL002A"
RANGE_A, RANGE_B = (0, 7), (8, 15)


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    # pyproject.toml sets DJANGO_SETTINGS_MODULE for pytest-django; when this suite
    # runs alone with ``-p no:django`` that key would be an unknown option, which
    # --strict/filterwarnings=error turn into an error. Declare it, unused, then.
    if not pluginmanager.has_plugin("django"):
        parser.addini("DJANGO_SETTINGS_MODULE", "unused without pytest-django")


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    """The data model of the stores below (a suite over another model overrides it)."""
    return CATALOG


@pytest.fixture(autouse=True)
def required_pools(monkeypatch: pytest.MonkeyPatch) -> None:
    """A caches document names this catalog's pools, as a site declares its own at import;
    a site's, declared when its settings load in the same run, are not this suite's."""
    monkeypatch.setattr(documents, "_REQUIRED_POOLS", dict.fromkeys(CACHE_POOLS))


def pools_of(catalog: Catalog) -> tuple[str, ...]:
    """The cache pools a CachedStore over ``catalog`` needs: its types' and ``lists``."""
    return (*dict.fromkeys(t.pool for t in catalog.types.values()), "lists")


def two_host_topology(address_a: str, address_b: str, *, version: int = 1) -> Topology:
    """16 shards: [0, 7] on host A, [8, 15] on host B, all open."""
    return Topology.from_json(
        {
            "version": version,
            "shard_count": SHARD_COUNT,
            "hosts": {HOST_A: address_a, HOST_B: address_b},
            "ranges": [
                {"range": list(RANGE_A), "master": HOST_A},
                {"range": list(RANGE_B), "master": HOST_B},
            ],
            "open": [[0, SHARD_COUNT - 1]],
            "lookup_shards": SHARD_COUNT,
        }
    )


@dataclass
class Backend:
    """What a test may need besides the store: how to address hosts of this backend."""

    kind: str
    address_a: str
    address_b: str
    #: An address of this backend that cannot be reached.
    unreachable: Callable[[], str]
    catalog: Catalog
    stores: list[Store] = field(default_factory=list)

    def make_store(self, topology: Topology, **options: Any) -> Store:
        """Another Store (closed at teardown)."""
        store = Store(topology, **options, catalog=self.catalog)
        self.stores.append(store)
        return store


class _MySQLSchema:
    """The 16 shard databases on the session's MariaDB, emptied between tests."""

    def __init__(self, host: str, port: int, catalog: Catalog) -> None:
        import MySQLdb

        self.address = f"mysql://root@{host}:{port}"
        store = Store(two_host_topology(self.address, self.address), catalog=catalog)
        try:
            init_shards(store)
        finally:
            store.close()
        self.connection = MySQLdb.connect(host=host, port=port, user="root", autocommit=True)
        cursor = self.connection.cursor()
        cursor.execute(
            "SELECT table_schema, table_name FROM information_schema.tables"
            " WHERE table_schema REGEXP '^db[0-9]{5}$' ORDER BY 1, 2"
        )
        self.tables = [f"{db}.{table}" for db, table in cursor.fetchall()]
        assert len({t.split(".")[0] for t in self.tables}) == SHARD_COUNT
        # One round trip finds the tables that hold any row.
        self._probe = " UNION ALL ".join(f"(SELECT '{t}' FROM {t} LIMIT 1)" for t in self.tables)

    def clean(self) -> None:
        cursor = self.connection.cursor()
        cursor.execute(self._probe)
        for (table,) in cursor.fetchall():
            cursor.execute(f"TRUNCATE TABLE {table}")

    def close(self) -> None:
        self.connection.close()


@pytest.fixture(scope="session")
def mysql_schema(mariadb_server: Any, catalog: Catalog) -> Iterator[_MySQLSchema]:
    schema = _MySQLSchema(mariadb_server.host, mariadb_server.port, catalog)
    try:
        yield schema
    finally:
        schema.close()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Path:
    """Two initialized sqlite host directories, copied (fast) into each test's tmp_path."""
    root = tmp_path_factory.mktemp("sqlite-template")
    store = Store(
        two_host_topology(f"sqlite://{root / 'hostA'}", f"sqlite://{root / 'hostB'}"),
        catalog=catalog,
    )
    try:
        init_shards(store)
    finally:
        store.close()
    return root


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path, catalog: Catalog) -> Iterator[Backend]:
    """The backend under test (sqlite or mysql), with clean shards on two hosts."""
    if request.param == "sqlite":
        template: Path = request.getfixturevalue("sqlite_template")
        for host in ("hostA", "hostB"):
            shutil.copytree(template / host, tmp_path / host)
        env = Backend(
            "sqlite",
            f"sqlite://{tmp_path / 'hostA'}",
            f"sqlite://{tmp_path / 'hostB'}",
            unreachable=lambda: f"sqlite://{tmp_path / 'no-such-dir'}",
            catalog=catalog,
        )
    else:
        schema: _MySQLSchema = request.getfixturevalue("mysql_schema")
        schema.clean()
        env = Backend(
            "mysql",
            schema.address,
            schema.address,
            unreachable=lambda: f"mysql://root@127.0.0.1:{free_port()}",
            catalog=catalog,
        )
    try:
        yield env
    finally:
        for store in env.stores:
            store.close()


@pytest.fixture
def plain_store(backend: Backend) -> Store:
    """A Store over 16 initialized shards: [0, 7] on host A, [8, 15] on host B."""
    return backend.make_store(two_host_topology(backend.address_a, backend.address_b))


@pytest.fixture(params=["plain", "cached"])
def store(request: pytest.FixtureRequest, backend: Backend, plain_store: Store) -> StoreInterface:
    """The store under a contract test: every implementation of ``StoreInterface``.

    ``plain`` is the Store itself; ``cached`` is a CachedStore in front of it, with
    local-memory pools over SQLite and pools on the session's real memcached over MySQL.
    """
    if request.param == "plain":
        return plain_store
    names = pools_of(plain_store.catalog)
    if backend.kind == "sqlite":
        pools: dict[str, Any] = {name: LocalPool(name) for name in names}
    else:
        make: Callable[[str], Any] = request.getfixturevalue("memcached_pool")
        pools = {name: make(name) for name in names}
        pools["lists"].clear()  # one server: IDs repeat from test to test (fresh shards)
    return CachedStore(plain_store, pools)


def plain(store: StoreInterface) -> Store:
    """The plain Store under ``store`` (for tests that read or write rows by hand)."""
    return store.store if isinstance(store, CachedStore) else cast(Store, store)


# -- cache pools, the Redis follower graph and home feeds (issue 4) ----------------
#
# Real servers only: the session's memcached and Redis (tests/conftest.py).
# Redis databases 1..4 belong to this suite (the site's tests use database 0);
# each is emptied before and after a test that asks for it.

SUITE_REDIS_DBS = (1, 2, 3, 4)


@pytest.fixture
def redis_db(redis_server: Any) -> Iterator[Callable[[int], str]]:
    """``redis_db(n)``: the URL of database ``n`` (1..4) of the session's Redis, emptied."""
    import redis as redis_lib

    used: list[str] = []

    def flush(url: str) -> None:
        client = redis_lib.Redis.from_url(url)
        try:
            client.flushdb()
        finally:
            client.close()

    def make(db: int) -> str:
        assert db in SUITE_REDIS_DBS, f"database {db} is not this suite's"
        url = f"redis://{redis_server.host}:{redis_server.port}/{db}"
        flush(url)
        used.append(url)
        return url

    yield make
    for url in used:
        flush(url)


@pytest.fixture
def redis_round_trips(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Real round trips to Redis by database number: every request redis-py writes to a
    socket (one per command, one per pipeline or MULTI). Warm connections up before
    measuring: a new connection's SELECT counts too."""
    from collections import Counter

    from redis.connection import AbstractConnection

    trips: Counter[int] = Counter()
    original = AbstractConnection.send_packed_command

    def counting(self: Any, command: Any, check_health: bool = True) -> Any:
        trips[int(self.db)] += 1
        return original(self, command, check_health)

    monkeypatch.setattr(AbstractConnection, "send_packed_command", counting)
    return trips


@pytest.fixture
def memcached_pool(memcached_server: Any) -> Iterator[Callable[[str], Any]]:
    """``memcached_pool(name)``: a MemcachePool on the session's memcached (closed after)."""
    from shardstore.cache import MemcachePool

    made: list[Any] = []

    def make(name: str) -> Any:
        pool = MemcachePool(name, [f"{memcached_server.host}:{memcached_server.port}"])
        made.append(pool)
        return pool

    yield make
    for pool in made:
        pool.close()


_roots = itertools.count(1)


@pytest.fixture(params=["files", "zookeeper"])
def source(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ConfigSource]:
    """A config source of each kind: a directory of files, and a ZooKeeper root of its own."""
    if request.param == "files":
        made: ConfigSource = FileSource(tmp_path / "config")
    else:
        zookeeper = request.getfixturevalue("zookeeper_server")
        made = open_source(f"zk://{zookeeper.address}/test-source-{next(_roots)}")
    yield made
    made.close()
