"""Every store implements the declared interface, method by method, with the same signature.

mypy checks this too (``shardstore/store.py``, ``shardstore/cache/cached_store.py``); this test
keeps it true for code that mypy does not see, and names the first missing method.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from shardstore import interface
from shardstore.cache import CachedStore, LocalPool
from shardstore.cache.lookups import CachedLookup
from shardstore.cache.tables import CachedMapping, CachedObjects
from shardstore.lookups import LookupTable
from shardstore.mappings import MappingTable
from shardstore.objects import ObjectTable
from shardstore.store import Store

from .catalog import CACHE_POOLS, CATALOG

IMPLEMENTATIONS = [
    (interface.StoreInterface, [Store, CachedStore]),
    (interface.ObjectTableInterface, [ObjectTable, CachedObjects]),
    (interface.MappingTableInterface, [MappingTable, CachedMapping]),
    (interface.LookupTableInterface, [LookupTable, CachedLookup]),
]


def members(protocol: type) -> dict[str, Any]:
    """The methods and properties a Protocol declares (not those of ``Protocol`` itself)."""
    return {
        name: value
        for name, value in vars(protocol).items()
        if not name.startswith("_") and (callable(value) or isinstance(value, property))
    }


def parameters(function: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize(
    ("protocol", "implementation"),
    [(p, impl) for p, impls in IMPLEMENTATIONS for impl in impls],
    ids=lambda value: value.__name__,
)
def test_every_method_is_written_out_with_the_same_signature(
    protocol: type, implementation: type
) -> None:
    assert "__getattr__" not in vars(implementation), "forwarding hides missing methods"
    for name, declared in members(protocol).items():
        own = inspect.getattr_static(implementation, name, None)
        assert own is not None, f"{implementation.__name__} lacks {name}"
        if isinstance(declared, property):
            assert isinstance(own, property), f"{implementation.__name__}.{name} is a property"
        else:
            assert parameters(own) == parameters(declared), f"{implementation.__name__}.{name}"


def test_a_cached_store_is_a_store_at_run_time(tmp_path: Any) -> None:
    from shardstore import Topology, init_shards

    store = Store(Topology.single_host(f"sqlite://{tmp_path}", shard_count=4), catalog=CATALOG)
    cached = CachedStore(store, {n: LocalPool(n) for n in CACHE_POOLS})
    init_shards(cached)  # schema creation needs only the interface
    assert cached.topology is store.topology
    assert cached.table_set() == store.table_set()
    cached.close()


def test_a_pinned_thread_keeps_its_shard_map_while_another_is_swapped_in(tmp_path: Any) -> None:
    import threading

    from shardstore import Topology

    def topology(version: int, master: str) -> Topology:
        return Topology.from_json(
            {
                "version": version,
                "shard_count": 4,
                "hosts": {"A": f"sqlite://{tmp_path / 'A'}", "B": f"sqlite://{tmp_path / 'B'}"},
                "ranges": [{"range": [0, 3], "master": master}],
                "open": [[0, 3]],
                "lookup_shards": 4,
            }
        )

    store = Store(topology(1, "A"), catalog=CATALOG)
    cached = CachedStore(store, {n: LocalPool(n) for n in CACHE_POOLS})
    seen_elsewhere = []
    with cached.pinned() as pinned:
        assert pinned.version == 1
        store.set_topology(topology(2, "B"))
        worker = threading.Thread(target=lambda: seen_elsewhere.append(store.backend(0).host))
        worker.start()
        worker.join()
        with store.pinned() as inner:  # nested: the outer pin holds
            assert inner.version == 1
        assert store.topology.version == 1 and store.backend(0).host == "A"
    assert seen_elsewhere == ["B"]  # an unpinned thread routes by the new map
    assert store.topology.version == 2 and store.backend(0).host == "B"
    store.close()
