"""The Store: one topology, one backend per host, and the tables of the catalog.

A Store is built from plain objects (a Topology, a Catalog, backend options),
so a web process, a Celery worker, a script or a test can each make one. The
topology and the backends it needs are swapped together, atomically, when the
shard map changes; in-flight sessions finish on the host they started on.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from . import idempotency
from .backends import Backend, Dialect, Session, TableSet, batched, open_backend
from .catalog import Catalog
from .exceptions import WriteConflict, WritesInFlight
from .fence import HOLD_SECONDS, WriteFence
from .idempotency import IdempotencyKeys
from .ids import shard_of
from .interface import QueryCount
from .lookups import LookupTable
from .mappings import MappingTable
from .metrics import SqlMeter
from .objects import ObjectTable
from .selects import Rows, Select, fewest_statements
from .topology import Topology

T = TypeVar("T")


@dataclass(frozen=True)
class _Routing:
    topology: Topology
    backends: dict[str, Backend]


class Store:
    """Sharded objects, mappings and lookups over the hosts of a topology."""

    def __init__(
        self,
        topology: Topology,
        *,
        catalog: Catalog,
        backend_options: dict[str, Any] | None = None,
        hold_seconds: float = HOLD_SECONDS,
    ) -> None:
        self.catalog = catalog
        self._backend_options = dict(backend_options or {})
        self._swap_lock = threading.Lock()
        self._local = threading.local()
        self._routing = _Routing(topology, {})
        self._fence = WriteFence(lambda: self._routing.topology, hold_seconds=hold_seconds)
        self._objects = {name: ObjectTable(self, t) for name, t in catalog.types.items()}
        self._mappings = {name: MappingTable(self, r) for name, r in catalog.relations.items()}
        self._lookups = {name: LookupTable(self, lk) for name, lk in catalog.lookups.items()}
        self._idempotency_keys = IdempotencyKeys(self)
        tables = self.table_set()
        self._meter = SqlMeter(
            {
                **dict.fromkeys(tables.objects, "object"),
                **dict.fromkeys([*tables.mappings, "mapping_counts"], "mapping"),
                **dict.fromkeys([*tables.lookups, *idempotency.TABLES], "lookup"),
            }
        )
        self.set_topology(topology)

    # -- topology -------------------------------------------------------------

    @property
    def topology(self) -> Topology:
        return self._current().topology

    def _current(self) -> _Routing:
        """This thread's pinned routing, or else the one in force."""
        pinned: _Routing | None = self._local.__dict__.get("pinned")
        return self._routing if pinned is None else pinned

    @contextmanager
    def pinned(self) -> Iterator[Topology]:
        """Route this thread by the shard map in force now until the block ends, whatever
        is swapped in meanwhile: a request or a task sees one version, never half of two.
        A block inside another keeps the outer one's map."""
        state = self._local.__dict__
        if state.get("pinned") is not None:
            yield state["pinned"].topology
            return
        state["pinned"] = routing = self._routing
        try:
            yield routing.topology
        finally:
            state["pinned"] = None

    def _reroute(self, shard_id: int) -> Backend:
        """Where a write held through a move goes: the shard's master by the map in force,
        by which this thread is routed from now on (a request never mixes two maps' hosts
        after it has written)."""
        routing = self._routing
        if self._local.__dict__.get("pinned") is not None:
            self._local.__dict__["pinned"] = routing
        return routing.backends[routing.topology.master_of(shard_id)]

    @property
    def hold_seconds(self) -> float:
        """How long a write waits for a read-only window to end (``fence.hold``)."""
        return self._fence.hold_seconds

    @hold_seconds.setter
    def hold_seconds(self, seconds: float) -> None:
        self._fence.hold_seconds = seconds

    def set_topology(self, topology: Topology) -> None:
        """Swap in a new shard map; backends of unchanged hosts are kept. Returns once no
        write admitted under the old map is in flight (see ``fence``); raises
        ``WritesInFlight`` (the new map in force all the same) if some still were."""
        with self._swap_lock:
            old = self._routing.backends
            backends = {}
            for host, address in topology.hosts.items():
                kept = old.get(host)
                if kept is not None and kept.address == address:
                    backends[host] = kept
                else:
                    backends[host] = open_backend(
                        host, address, on_query=partial(self._note_query, host),
                        **self._backend_options,
                    )  # fmt: skip
            self._routing = _Routing(topology, backends)
        drained = self._fence.drain()
        for host, backend in old.items():
            if backends.get(host) is not backend:
                backend.close()
        if not drained:
            raise WritesInFlight(
                f"shard map v{topology.version}: writes under the old map in flight"
            )

    def backend(self, shard_id: int) -> Backend:
        """The backend of the host that masters ``shard_id``."""
        routing = self._current()
        return routing.backends[routing.topology.master_of(shard_id)]

    def dialect(self, shard_id: int) -> Dialect:
        """The SQL dialect of the host that masters ``shard_id``."""
        return self.backend(shard_id).dialect

    def backends(self) -> dict[str, Backend]:
        return dict(self._current().backends)

    def read_groups(self, shard_ids: Iterable[int]) -> list[list[int]]:
        """Shards to read with one statement each: a host's shards together when one of its
        connections reaches them all (``Backend.spans_shards``), up to the dialect's UNION
        limit; otherwise each shard alone. A page of pins from 50 shards on 2 hosts is then
        2 round trips, not 50."""
        routing = self._current()
        by_host: dict[str, list[int]] = {}
        groups = []
        for shard_id in dict.fromkeys(shard_ids):
            host = routing.topology.master_of(shard_id)
            if routing.backends[host].spans_shards:
                by_host.setdefault(host, []).append(shard_id)
            else:
                groups.append([shard_id])
        for host, shards in by_host.items():
            limit = routing.backends[host].dialect.max_union
            groups += [list(batch) for batch in batched(shards, limit)]
        return groups

    def select_each(self, selects: Sequence[Select]) -> list[Rows]:
        """The rows of each SELECT, the statements of one read group (``read_groups``: a
        host's shards) sent in one round trip (``Session.query_each``), its SELECTs of
        objects in one statement (``fewest_statements``)."""
        group_of = {
            shard: group[0]
            for group in self.read_groups(select.shard_id for select in selects)
            for shard in group
        }
        by_group: dict[int, list[int]] = {}
        for index, select in enumerate(selects):
            by_group.setdefault(group_of[select.shard_id], []).append(index)
        found: list[Rows] = [[] for _ in selects]
        for shard_id, indexes in by_group.items():
            max_union = self.dialect(shard_id).max_union
            sent, spread = fewest_statements([selects[i] for i in indexes], max_union)
            with self.session(shard_id) as session:
                answers = session.query_each([(s.shard_id, s.sql, s.params) for s in sent])
            for index, rows in zip(indexes, spread(answers), strict=True):
                found[index] = rows
        return found

    def database(self, shard_id: int) -> str:
        """The name of a shard's database on its host (what ``{db}`` renders to)."""
        return self.backend(shard_id).database(shard_id)

    def session(self, shard_id: int, *, write: bool = False) -> Any:
        """A session on a shard's master (a transaction when ``write``), whose writes the
        fence admits only while the map in force still names that master; a write that
        meets a move waits for it and goes to the shard's new master."""
        return self.backend(shard_id).session(
            shard_id, write=write, fence=self._fence, reroute=self._reroute
        )

    def transaction(self, shard_id: int, work: Callable[[Session], T], *, attempts: int = 5) -> T:
        """Run ``work(session)`` in one write transaction, again if it loses a lock conflict.

        ``work`` must be safe to run more than once: each attempt starts over
        from a rolled-back state. WriteConflict after ``attempts`` tries.
        """
        for attempt in range(1, attempts + 1):
            try:
                with self.session(shard_id, write=True) as session:
                    return work(session)
            except WriteConflict:
                if attempt == attempts:
                    raise
                time.sleep(random.uniform(0, 0.002 * 2**attempt))  # jittered backoff
        raise AssertionError("unreachable")  # pragma: no cover

    def new_user_shard(self) -> int:
        """Where a new user lands: a random shard among the open ranges."""
        return self.topology.random_open_shard()

    # -- tables ---------------------------------------------------------------

    def objects(self, type_name: str) -> ObjectTable:
        """The object table of a type ("photo", "album", ...)."""
        self.catalog.type(type_name)
        return self._objects[type_name]

    def mapping(self, name: str) -> MappingTable:
        """A mapping table by its noun_verb_noun name."""
        self.catalog.relation(name)
        return self._mappings[name]

    def lookup(self, name: str) -> LookupTable:
        """A mod-shard lookup table by its catalog name."""
        self.catalog.lookup(name)
        return self._lookups[name]

    def idempotency_keys(self) -> IdempotencyKeys:
        """Idempotency keys' claims and rows (``idempotency.py``)."""
        return self._idempotency_keys

    def edges_exist(self, edges: Iterable[tuple[str, int, int]]) -> set[tuple[str, int, int]]:
        """Which of these ``(relation, from_id, to_id)`` edges are mapped: one query per shard.

        Checks of several relations that live on one shard (does the viewer
        like this pin, follow its board, follow its owner) cost one round trip.
        """
        by_shard: dict[int, list[tuple[str, int, int]]] = {}
        for relation, from_id, to_id in edges:
            mapping = self.mapping(relation).relation
            from_id = self.catalog.expect(from_id, mapping.from_type)
            to_id = self.catalog.expect(to_id, mapping.to_type)
            by_shard.setdefault(shard_of(from_id), []).append((relation, from_id, to_id))
        found: set[tuple[str, int, int]] = set()
        for shard_id, checks in by_shard.items():
            with self.session(shard_id) as session:
                for batch in batched(checks, session.dialect.max_union):
                    sql = " UNION ALL ".join(
                        f"SELECT {i} FROM {{db}}.{relation} WHERE from_id = %s AND to_id = %s"
                        for i, (relation, _, _) in enumerate(batch)
                    )
                    params = [value for _, from_id, to_id in batch for value in (from_id, to_id)]
                    found.update(batch[int(row[0])] for row in session.query(sql, params))
        return found

    def table_set(self) -> TableSet:
        return TableSet(
            objects=[t.table for t in self.catalog.types.values()],
            mappings=list(self.catalog.relations),
            lookups=[lk.table for lk in self.catalog.lookups.values()],
        )

    # -- accounting -----------------------------------------------------------

    @contextmanager
    def count_queries(self) -> Iterator[QueryCount]:
        """Count the SQL round trips this thread makes inside the block."""
        counters = self._local.__dict__.setdefault("counters", [])
        counter = QueryCount()
        counters.append(counter)
        try:
            yield counter
        finally:
            counters.remove(counter)

    def _note_query(self, host: str, shard_id: int, sql: str, seconds: float) -> None:
        self._meter.observe(host, shard_id, sql, seconds)
        counters = self._local.__dict__.get("counters")
        if counters:
            for counter in counters:
                counter.statements.append(sql)

    def close(self) -> None:
        for backend in self._routing.backends.values():
            backend.close()


if TYPE_CHECKING:
    from .interface import ShardAccess, StoreInterface

    _interface: type[StoreInterface] = Store  # checked by mypy: Store is a StoreInterface
    _access: type[ShardAccess] = Store

__all__ = ["Session", "Store"]
