"""The cached tables' tests: CachedStore over the contract store (sqlite and mysql), with
pools all in process memory or all on a real memcached."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from shardstore import Store
from shardstore.cache import CachedStore, LocalPool


@pytest.fixture
def store(plain_store: Store) -> Store:
    """The cache's own tests put their pools in front of the plain store."""
    return plain_store


POOL_NAMES = ("accounts", "folders", "notes", "lists")


@pytest.fixture(params=["local", "memcached"])
def pools(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.param == "local":
        return {name: LocalPool(name) for name in POOL_NAMES}
    make: Callable[[str], Any] = request.getfixturevalue("memcached_pool")
    made = {name: make(name) for name in POOL_NAMES}
    # IDs repeat from test to test (fresh shards each time): start from an empty cache.
    made["lists"].clear()
    return made


@pytest.fixture
def cached(store: Store, pools: dict[str, Any]) -> CachedStore:
    return CachedStore(store, pools)
