"""The store's interface: what every store offers, plain or cached.

``Store`` (the shards themselves) and ``cache.CachedStore`` (the same store
behind cache pools) both implement ``StoreInterface``, and their tables
implement ``ObjectTableInterface``, ``MappingTableInterface`` and
``LookupTableInterface``, each method written out in both: code written
against these Protocols (the site, reconcile, a Celery task, a script) runs
on either, and a cached store can never silently lack a method. One contract
test suite runs over every implementation (tests/shardstore/).

``ShardAccess`` is the narrower interface the plain tables need from their
store: sessions and transactions on a shard's master.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

if TYPE_CHECKING:
    from .backends import Backend, Dialect, Session, TableSet
    from .catalog import Catalog, Lookup, ObjectType, Relation
    from .idempotency import IdempotencyKey, IdempotencyKeys
    from .selects import Rows, Select
    from .topology import Topology

T = TypeVar("T")


@dataclass
class QueryCount:
    """SQL round trips seen inside ``Store.count_queries()``."""

    statements: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.statements)


#: What ``ObjectTableInterface.update`` takes: a dict to merge, or a function
#: that edits the data in place (run again if the transaction is retried).
Changes = Mapping[str, Any] | Callable[[dict[str, Any]], None]


class Page(NamedTuple):
    """One page of a mapping list: the to-IDs, and the cursor of the next page (None at the end)."""

    ids: list[int]
    cursor: str | None


class ObjectTableInterface(Protocol):
    """The objects of one type: JSON blobs on every shard."""

    type: ObjectType

    def create(
        self, shard_id: int, data: Mapping[str, Any], *, key: IdempotencyKey | None = None
    ) -> int:
        """Insert ``data`` on ``shard_id``; returns the new object's full ID. With an
        idempotency ``key``, the key's row goes in the same transaction; AlreadyCreated
        (nothing written) if the key names an object already."""
        ...

    def get(
        self, object_id: int | str, *, include_inactive: bool = False, counts: Sequence[str] = ()
    ) -> dict[str, Any] | None:
        """The object (with its ``id``), or None if absent or soft-deleted."""
        ...

    def get_many(
        self,
        object_ids: Iterable[int | str],
        *,
        include_inactive: bool = False,
        counts: Sequence[str] = (),
    ) -> list[dict[str, Any]]:
        """Objects in the order asked, missing ones left out; ``counts`` names mapping
        tables whose counts come along under ``data["counts"]``."""
        ...

    def update(self, object_id: int | str, changes: Changes) -> dict[str, Any]:
        """Read-modify-write in one transaction; NotFound if absent or deleted."""
        ...

    def delete(self, object_id: int | str, *, hard: bool = False) -> bool:
        """Soft-delete (or remove the row); whether there was an object to delete."""
        ...

    # a maintenance read: always from the database, never through a cache
    def scan(
        self, shard_id: int, *, batch: int = 1000, include_inactive: bool = False
    ) -> Iterator[list[dict[str, Any]]]:
        """Every object of this type on one shard, in ID order, ``batch`` rows at a time."""
        ...


class MappingTableInterface(Protocol):
    """One ``noun_verb_noun`` table on every shard, and its inverse if it has one."""

    relation: Relation

    # writes
    def add(self, from_id: int | str, to_id: int | str, *, sequence: int | None = None) -> bool:
        """Map the pair (and its inverse); whether the forward row is new."""
        ...

    def remove(self, from_id: int | str, to_id: int | str) -> bool:
        """Unmap the pair (and its inverse); whether the forward row was there."""
        ...

    def repair_inverse(self, from_id: int | str, to_id: int | str) -> bool:
        """Make the inverse row of the pair agree with its forward row (present with the
        forward row's sequence, or absent); whether anything changed (reconcile)."""
        ...

    # reads
    def page(
        self,
        from_id: int | str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        oldest_first: bool = False,
    ) -> Page:
        """One page of to-IDs, newest first unless ``oldest_first``."""
        ...

    def page_many(self, from_ids: Iterable[int | str], *, limit: int = 50) -> dict[int, Page]:
        """The first page (newest first) of many lists."""
        ...

    def rows_many(
        self, from_ids: Iterable[int | str], *, limit: int
    ) -> dict[int, list[tuple[int, int]]]:
        """The newest ``limit`` ``(to_id, sequence)`` rows of each list."""
        ...

    def rows_page(
        self,
        from_id: int | str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        oldest_first: bool = False,
    ) -> tuple[list[tuple[int, int]], str | None]:
        """One page of ``(to_id, sequence)`` rows and the next page's cursor, newest first
        unless ``oldest_first`` (for jobs that move rows to another list with their
        sequences)."""
        ...

    def count(self, from_id: int | str) -> int: ...

    def count_many(self, from_ids: Iterable[int | str]) -> dict[int, int]: ...

    def contains(self, from_id: int | str, to_id: int | str) -> bool: ...

    def filter(self, from_id: int | str, candidates: Iterable[int | str]) -> list[int]:
        """Which of ``candidates`` are mapped from ``from_id``, in the order given."""
        ...

    # maintenance reads: always from the database, never through a cache (a bulk
    # walk would flood the cache, and a check after a crash must see the rows)
    def scan(self, shard_id: int, *, batch: int = 1000) -> Iterator[list[tuple[int, int, int]]]:
        """Every ``(from_id, to_id, sequence)`` row on one shard, in key order."""
        ...

    def present(self, pairs: Iterable[tuple[int, int]]) -> set[tuple[int, int]]:
        """Which of these ``(from_id, to_id)`` pairs have a row."""
        ...


class LookupTableInterface(Protocol):
    """A mod-shard table from a unique external key to an object ID."""

    lookup: Lookup

    def key(self, key: str) -> str:
        """The normalized key (InvalidKey if it cannot be one)."""
        ...

    def shard_of(self, key: str) -> int: ...

    def insert(self, key: str, object_id: int) -> None:
        """Claim ``key`` for ``object_id``; DuplicateKey (and no change) if taken."""
        ...

    def get(self, key: str) -> int | None: ...

    def delete(self, key: str, object_id: int) -> bool:
        """Release ``key`` if it still maps to ``object_id``; whether it did."""
        ...


class StoreInterface(Protocol):
    """Sharded objects, mappings and lookups over the hosts of a topology."""

    catalog: Catalog

    @property
    def topology(self) -> Topology: ...

    def set_topology(self, topology: Topology) -> None:
        """Swap in a new shard map, atomically."""
        ...

    def pinned(self) -> AbstractContextManager[Topology]:
        """Keep this thread on the shard map in force now until the block ends."""
        ...

    def new_user_shard(self) -> int:
        """Where a new user lands: a random shard among the open ranges."""
        ...

    def objects(self, type_name: str) -> ObjectTableInterface: ...

    def mapping(self, name: str) -> MappingTableInterface: ...

    def lookup(self, name: str) -> LookupTableInterface: ...

    def idempotency_keys(self) -> IdempotencyKeys:
        """Idempotency keys' claims and rows, on the shards themselves (never cached)."""
        ...

    def edges_exist(self, edges: Iterable[tuple[str, int, int]]) -> set[tuple[str, int, int]]:
        """Which of these ``(relation, from_id, to_id)`` edges are mapped."""
        ...

    def count_queries(self) -> AbstractContextManager[QueryCount]:
        """Count the SQL round trips this thread makes inside the block."""
        ...

    def backends(self) -> dict[str, Backend]:
        """The backend of each host (schema creation, operators' tools)."""
        ...

    def table_set(self) -> TableSet:
        """Every table a shard holds."""
        ...

    def close(self) -> None: ...


class ShardAccess(Protocol):
    """What the plain tables need from their store."""

    catalog: Catalog

    @property
    def topology(self) -> Topology: ...

    def session(self, shard_id: int, *, write: bool = False) -> Session: ...

    def read_groups(self, shard_ids: Iterable[int]) -> list[list[int]]: ...

    def select_each(self, selects: Sequence[Select]) -> list[Rows]: ...

    def dialect(self, shard_id: int) -> Dialect: ...

    def database(self, shard_id: int) -> str: ...

    def transaction(
        self, shard_id: int, work: Callable[[Session], T], *, attempts: int = 5
    ) -> T: ...
