"""Fixtures of the social model's tests: the library's contract stores (sqlite and mysql,
plain and cached, on the catalog of tests/shardstore) and the suite's Redis databases,
shared with tests/shardstore. No Django is needed here (run with ``-p no:django``)."""

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
