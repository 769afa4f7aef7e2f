"""Fixtures of the social model's tests: the library's contract stores (sqlite and mysql,
plain and cached), here on the social model's tables (catalog.py), and the suite's Redis
databases, shared with tests/shardstore. No Django is needed here (run with
``-p no:django``)."""

from collections.abc import Callable, Iterator

import pytest

from shardstore import Catalog
from shardstore.redis_shards import RedisShards, RedisTopology
from tests.shardstore.conftest import (  # noqa: F401 - fixtures, and the ini hook
    backend,
    memcached_pool,
    mysql_schema,
    plain_store,
    pytest_addoption,
    redis_db,
    redis_round_trips,
    sqlite_template,
    store,
)

from .catalog import CATALOG


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return CATALOG


@pytest.fixture(params=["one", "two"])
def redis_shards(request: pytest.FixtureRequest) -> Iterator[RedisShards]:
    """The social model's Redis on one instance, or split over two by virtual shard."""
    database: Callable[[int], str] = request.getfixturevalue("redis_db")
    if request.param == "one":
        topology = RedisTopology.single(database(3))
    else:
        halves = [{"range": [0, 4095], "instance": "r1"}, {"range": [4096, 8191], "instance": "r2"}]
        instances = {"r1": database(1), "r2": database(2)}
        topology = RedisTopology.from_json({"version": 1, "instances": instances, "ranges": halves})
    shards = RedisShards(topology)
    for client in shards.clients().values():
        client.ping()  # connect now: a new connection's SELECT is not a query's round trip
    yield shards
    shards.close()
