"""Fixtures of the social model's tests: the library's contract stores (sqlite and mysql,
plain and cached), here on the site's catalog (the tables the social model reads), and the
suite's Redis databases, shared with tests/shardstore. No Django is needed here (run with
``-p no:django``)."""

import pytest

from pinboard.catalog import CATALOG
from shardstore import Catalog
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


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return CATALOG
