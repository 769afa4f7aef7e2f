"""A Store with cache pools in front: the same API, read-through, invalidated on write.

``CachedStore(store, pools)`` hands out cached tables in place of the store's
own, so code written against a Store runs unchanged, and a warm page costs no
SQL. Pools by name: each object type's ``pool`` (in the catalog) holds its objects
and the lookups to them; ``lists`` holds mapping lists, counts and edge checks.

Its fills expire after ``fill_seconds`` (a day by default), and ``lease`` (a config
follower's ``lease``: why the process may have missed a new shard map, or None) withholds
them: while it gives a reason, reads go through to MySQL and are served, and nothing is
stored in the caches, not a fill, not an append to a list (writes delete the keys they
change, lists too). Deletes are always sent: one never makes a cached value wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from ..backends import Backend, TableSet
from ..idempotency import IdempotencyKeys
from ..interface import QueryCount
from ..selects import Selects
from ..store import Store
from ..topology import Topology
from .lookups import CachedLookup
from .pools import CachePool
from .readthrough import FILL_TTL, Fills, read_through
from .tables import CachedMapping, CachedObjects


class CachedStore:
    """A ``StoreInterface`` whose reads go through cache pools; ``store`` is the plain one."""

    def __init__(
        self,
        store: Store,
        pools: Mapping[str, CachePool],
        *,
        lease: Callable[[], str | None] | None = None,
        fill_seconds: int = FILL_TTL,
    ) -> None:
        self.store = store
        self.catalog = store.catalog
        self.pools = dict(pools)
        self.fills = Fills(fill_seconds, lease)
        types = store.catalog.types
        missing = {"lists", *(t.pool for t in types.values())} - self.pools.keys()
        if missing:
            raise ValueError(f"no cache pool named {', '.join(sorted(missing))}")
        lists = self.pools["lists"]
        self._objects = {
            name: CachedObjects(self, store.objects(name), self.pools[t.pool])
            for name, t in types.items()
        }
        self._mappings = {
            name: CachedMapping(self, store.mapping(name), lists)
            for name in store.catalog.relations
        }
        self._lookups = {
            name: CachedLookup(
                store.lookup(name), self.pools[types[lookup.object_type].pool], self.fills
            )
            for name, lookup in store.catalog.lookups.items()
        }

    # -- the topology, and what is not cached -----------------------------------

    @property
    def topology(self) -> Topology:
        return self.store.topology

    def set_topology(self, topology: Topology) -> None:
        # Cache keys name objects, not hosts: a new shard map leaves them valid.
        self.store.set_topology(topology)

    def pinned(self) -> AbstractContextManager[Topology]:
        return self.store.pinned()

    def new_user_shard(self) -> int:
        return self.store.new_user_shard()

    def count_queries(self) -> AbstractContextManager[QueryCount]:
        return self.store.count_queries()

    def backends(self) -> dict[str, Backend]:
        return self.store.backends()

    def table_set(self) -> TableSet:
        return self.store.table_set()

    def close(self) -> None:
        self.store.close()

    # -- tables ---------------------------------------------------------------

    def objects(self, type_name: str) -> CachedObjects:
        self.catalog.type(type_name)
        return self._objects[type_name]

    def mapping(self, name: str) -> CachedMapping:
        self.catalog.relation(name)
        return self._mappings[name]

    def lookup(self, name: str) -> CachedLookup:
        self.catalog.lookup(name)
        return self._lookups[name]

    def idempotency_keys(self) -> IdempotencyKeys:
        # Never cached: a cached "absent" would hide a commit that landed after its caller
        # gave up on it, which is what a retry must find.
        return self.store.idempotency_keys()

    def edges_exist(self, edges: Iterable[tuple[str, int, int]]) -> set[tuple[str, int, int]]:
        """``Store.edges_exist`` through the lists pool (``1``/``0`` per edge)."""
        checks = [(r, self.catalog.expect(f, self.catalog.relation(r).from_type),
                   self.catalog.expect(t, self.catalog.relation(r).to_type)) for r, f, t in edges]  # fmt: skip
        keys = {edge: self._mappings[edge[0]].edge_key(edge[1], edge[2]) for edge in checks}
        by_key = {key: edge for edge, key in keys.items()}

        def load(missing: list[str]) -> Selects[dict[str, bytes]]:
            def checked() -> dict[str, bytes]:
                found = self.store.edges_exist([by_key[k] for k in missing])
                return {k: b"1" if by_key[k] in found else b"0" for k in missing}

            return Selects.computed(checked)

        wanted = list(dict.fromkeys(keys.values()))
        values = read_through(self.pools["lists"], wanted, load, fills=self.fills)
        return {edge for edge, key in keys.items() if values[key] == b"1"}

    def pool_stats(self) -> dict[str, dict[str, int]]:
        return {name: pool.stats.as_dict() for name, pool in self.pools.items()}


if TYPE_CHECKING:
    from ..interface import StoreInterface

    _interface: type[StoreInterface] = CachedStore  # checked by mypy
