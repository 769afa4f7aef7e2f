"""Shared pytest fixtures for the whole test suite.

Real servers
------------
``mariadb_server``, ``redis_server``, ``memcached_server`` and
``zookeeper_server`` each start one private server (see toolkit/servers/) on
127.0.0.1, on a free port, with its data in a temporary directory; ``aws_server``
starts an S3 API server (moto's, tests/aws_server.py).  A server is
started the first time a test asks for its fixture, is shared by every test of
the session, and is stopped at the end.  Tests must therefore not rely on a
server being empty: use names of their own and clean up after themselves.
The site's tests on servers get a MariaDB and a memcached of their own
(``site_mariadb_server``, ``site_memcached_server``), apart from the shardstore
contract suite, which empties its shard databases between tests.

When a server cannot run here (its program, or for MariaDB the MySQLdb module
from requirements-mysql.txt, is missing) the tests that need it are skipped,
unless the environment says ``CI=true``: in CI a missing server is an error,
so that a broken machine cannot pass by skipping everything.

Property tests and the API fuzzer (Hypothesis) draw new examples on every local run,
and the same ones on every CI run (``derandomize``), so that a CI run that passed
passes again.

Keep this file to fixtures; server start-up logic belongs in toolkit/servers/.
"""

from __future__ import annotations

import faulthandler
import importlib.util
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import NoReturn, TypeVar

import pytest
from hypothesis import settings

from shardstore.cache.health import forget
from tests.aws_server import AwsServer
from toolkit.servers.base import Server
from toolkit.servers.mariadb import MariaDBServer
from toolkit.servers.memcached import MemcachedServer
from toolkit.servers.redis import RedisServer
from toolkit.servers.zookeeper import ZooKeeperServer

_S = TypeVar("_S", bound=Server)

settings.register_profile("ci", derandomize=True)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")


#: How long the process may take to exit once the tests are over.
EXIT_WITHIN = 120.0


def pytest_unconfigure(config: pytest.Config) -> None:
    """A thread left waiting at the end (a client of a server the tests have stopped) must
    not hold the run at its exit for ever: past ``EXIT_WITHIN`` seconds, every thread's
    stack is printed and the process ends, failed."""

    def watchdog() -> None:
        time.sleep(EXIT_WITHIN)
        print(f"\nstill exiting after {EXIT_WITHIN:g}s; the threads:", file=sys.__stderr__)
        faulthandler.dump_traceback(file=sys.__stderr__, all_threads=True)
        os._exit(1)

    threading.Thread(target=watchdog, name="exit-watchdog", daemon=True).start()


def unavailable(what: str, reason: str) -> NoReturn:
    """Skip the test because ``what`` is missing, or fail it when running in CI."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {what} is required but {reason}", pytrace=False)
    pytest.skip(f"{what} is not available: {reason}")


def _serve(server_class: type[_S]) -> Iterator[_S]:
    availability = server_class.available()
    if not availability:
        unavailable(server_class.name, availability.reason)
    server = server_class().start()
    if isinstance(server, MemcachedServer):
        forget(server.address)  # a test's server stopped earlier may have had this port
    try:
        yield server
    finally:
        server.stop()


def _serve_mariadb() -> Iterator[MariaDBServer]:
    if importlib.util.find_spec("MySQLdb") is None:
        unavailable(
            "MariaDB",
            "the MySQLdb module is not installed (pip install -r requirements-mysql.txt)",
        )
    yield from _serve(MariaDBServer)


@pytest.fixture(scope="session")
def mariadb_server() -> Iterator[MariaDBServer]:
    """A private MariaDB; connect as ``root`` with no password over TCP."""
    yield from _serve_mariadb()


@pytest.fixture(scope="session")
def site_mariadb_server() -> Iterator[MariaDBServer]:
    """Another private MariaDB, for the site's shards: the shardstore contract suite owns the
    shard databases of ``mariadb_server`` and empties them between its tests."""
    yield from _serve_mariadb()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A private Redis with persistence off; ``redis_server.url`` for clients."""
    yield from _serve(RedisServer)


@pytest.fixture(scope="session")
def memcached_server() -> Iterator[MemcachedServer]:
    """A private memcached (TCP only)."""
    yield from _serve(MemcachedServer)


@pytest.fixture(scope="session")
def site_memcached_server() -> Iterator[MemcachedServer]:
    """Another private memcached, for the site's cache pools: the shardstore contract suite
    caches objects of IDs that repeat from test to test, on ``memcached_server``."""
    yield from _serve(MemcachedServer)


@pytest.fixture(scope="session")
def zookeeper_server() -> Iterator[ZooKeeperServer]:
    """A private standalone ZooKeeper; ``zookeeper_server.address`` for kazoo."""
    yield from _serve(ZooKeeperServer)


@pytest.fixture(scope="session")
def aws_server() -> Iterator[AwsServer]:
    """A private S3 API server (moto's); ``aws_server.url`` for clients' ``endpoint_url``."""
    yield from _serve(AwsServer)


@pytest.fixture
def private_zookeeper() -> Iterator[ZooKeeperServer]:
    """A ZooKeeper of this test alone, which it may halt and restart (outage tests)."""
    yield from _serve(ZooKeeperServer)
