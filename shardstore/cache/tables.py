"""Cached views of the store's tables, in the spirit of the seeds' ``@mc_objects`` and
``@paged_list``: reads go through a pool with one multi-get, writes go to the store and
then invalidate (or append to) the cache after they commit."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

import orjson

from ..catalog import Catalog, Relation
from ..exceptions import AlreadyCreated, ShardUnavailable
from ..idempotency import IdempotencyKey
from ..interface import Page
from ..mappings import MappingTable, check_limit, now_sequence
from ..objects import ObjectTable, is_active
from ..selects import Selects
from . import lists
from .pools import CachePool
from .reads import Read
from .readthrough import (
    Fills,
    Through,
    forgetting,
    invalidate,
    key_for,
    read_through,
)


class CachedTables(Protocol):
    """What a cached table needs of its store (``CachedStore``): the catalog, its sibling
    tables (an edge's inverse, the objects whose counts an edge changes), edge checks, fills."""

    catalog: Catalog
    fills: Fills

    def objects(self, type_name: str) -> CachedObjects: ...

    def mapping(self, name: str) -> CachedMapping: ...

    def edges_exist(self, edges: Iterable[tuple[str, int, int]]) -> set[tuple[str, int, int]]: ...


VERSION = 1
#: How many entries of a list are cached (the newest); pages past them read MySQL.
LIST_CAP = 1000
ABSENT = b"null"


class CachedObjects:
    """``<type name>:%d`` keys holding each object's stored JSON and every count of the
    mappings from it (``null`` when absent): a page of 50 objects and their counts is one
    multi-get of 50 keys. A write to the object, or to a mapping that changes one of its
    counts, drops the key (``forget``)."""

    def __init__(self, cached: CachedTables, table: ObjectTable, pool: CachePool) -> None:
        self._cached = cached
        self._table = table
        self._pool = pool
        self.type = table.type
        self._template = f"{table.type.name}:%d"
        #: Every count an object of this type has, so one cached value serves every reader.
        self._counts = tuple(
            name for name, r in cached.catalog.relations.items() if r.from_type == self.type.name
        )

    def key(self, object_id: int) -> str:
        return key_for(self._template, VERSION, object_id)

    def get(
        self, object_id: int | str, *, include_inactive: bool = False, counts: Sequence[str] = ()
    ) -> dict[str, Any] | None:
        return self.reading_one(object_id, include_inactive=include_inactive, counts=counts).run()

    def reading_one(
        self, object_id: int | str, *, include_inactive: bool = False, counts: Sequence[str] = ()
    ) -> Read[dict[str, Any] | None]:
        """``get`` as a read to make with others (``read_together``)."""
        read = self.reading([object_id], include_inactive=include_inactive, counts=counts)
        return read.then(lambda found: found[0] if found else None)

    def get_many(
        self,
        object_ids: Iterable[int | str],
        *,
        include_inactive: bool = False,
        counts: Sequence[str] = (),
    ) -> list[dict[str, Any]]:
        """Objects (and the ``counts`` asked for) from the pool; what misses is read in one
        query per shard, objects and all their counts together (``ObjectTable.get_many``)."""
        return self.reading(object_ids, include_inactive=include_inactive, counts=counts).run()

    def reading(
        self,
        object_ids: Iterable[int | str],
        *,
        include_inactive: bool = False,
        counts: Sequence[str] = (),
    ) -> Read[list[dict[str, Any]]]:
        """``get_many`` as a read to make with others (``read_together``)."""
        wanted = self._cached.catalog.expect_all(object_ids, self.type.name)
        for relation in counts:
            if relation not in self._counts:
                raise ValueError(f"{relation} does not map from {self.type.name}")
        keys = {object_id: self.key(object_id) for object_id in dict.fromkeys(wanted)}
        by_key = {key: object_id for object_id, key in keys.items()}

        def load(missing: list[str]) -> Selects[dict[str, bytes]]:
            ids = [by_key[key] for key in missing]
            return self._table.selecting_stored(ids, counts=bool(self._counts)).then(
                lambda found: {keys[i]: _value(found.get(i)) for i in ids}
            )

        def shape(values: dict[str, bytes]) -> list[dict[str, Any]]:
            objects = []
            for object_id in wanted:
                data = orjson.loads(values[keys[object_id]])
                if data is None or not (include_inactive or is_active(data)):
                    continue
                data["id"] = object_id
                stored_counts = data.pop("counts", {})
                if counts:
                    data["counts"] = {r: stored_counts.get(r, 0) for r in counts}
                objects.append(data)
            return objects

        return Read(Through(self._pool, list(keys.values()), load, fills=self._cached.fills), shape)

    def create(
        self, shard_id: int, data: Mapping[str, Any], *, key: IdempotencyKey | None = None
    ) -> int:
        try:
            object_id = self._table.create(shard_id, data, key=key)
        except AlreadyCreated as earlier:  # its commit may have landed after a read missed it
            self.forget([earlier.object_id])
            raise
        self.forget([object_id])  # a read may have cached it as absent
        return object_id

    def update(self, object_id: int | str, changes: Any) -> dict[str, Any]:
        object_id = self._cached.catalog.expect(object_id, self.type.name)
        with forgetting(lambda: self.forget([object_id])):
            return self._table.update(object_id, changes)

    def delete(self, object_id: int | str, *, hard: bool = False) -> bool:
        object_id = self._cached.catalog.expect(object_id, self.type.name)
        with forgetting(lambda: self.forget([object_id])):
            return self._table.delete(object_id, hard=hard)

    def scan(
        self, shard_id: int, *, batch: int = 1000, include_inactive: bool = False
    ) -> Iterator[list[dict[str, Any]]]:
        return self._table.scan(shard_id, batch=batch, include_inactive=include_inactive)

    def forget(self, object_ids: Iterable[int]) -> None:
        """After a write that changed these objects or their counts has committed."""
        invalidate(self._pool, [self.key(object_id) for object_id in object_ids])


def _value(stored: tuple[str | bytes, str | bytes | None] | None) -> bytes:
    """The cached value: the stored JSON with ``"counts"`` (a JSON object) spliced in at its
    head, ``null`` when absent. The stored object never holds ``counts`` or ``id``
    (objects.py), so a cold read decodes nothing on its way from MySQL to the pool."""
    if stored is None:
        return ABSENT
    text, counts = (_bytes(part) for part in stored)
    if not counts:
        return text
    rest = text[1:].lstrip()  # after the object's opening brace
    return b'{"counts":' + counts + (rest if rest.startswith(b"}") else b"," + rest)


def _bytes(text: str | bytes | None) -> bytes:
    return text.encode() if isinstance(text, str) else text or b""


class CachedMapping:
    """A mapping table whose lists, counts and edge checks are cached in the lists pool."""

    def __init__(self, cached: CachedTables, table: MappingTable, pool: CachePool) -> None:
        self._cached = cached
        self._table = table
        self._pool = pool
        self.relation: Relation = table.relation

    # -- keys -----------------------------------------------------------------

    def list_key(self, from_id: int) -> str:
        return key_for("%s:%d", VERSION, self.relation.name, from_id)

    def count_key(self, from_id: int) -> str:
        return key_for("%s:n:%d", VERSION, self.relation.name, from_id)

    def edge_key(self, from_id: int, to_id: int) -> str:
        return key_for("%s:e:%d:%d", VERSION, self.relation.name, from_id, to_id)

    # -- reads ----------------------------------------------------------------

    def _lists(self, from_ids: list[int]) -> Read[dict[int, lists.CachedList | None]]:
        """The cached lists; None for a value that is foreign or overgrown (it is dropped,
        to be refilled, and this read goes to MySQL)."""
        keys = {self.list_key(f): f for f in from_ids}

        def load(missing: list[str]) -> Selects[dict[str, bytes]]:
            rows = self._table.selecting_rows([keys[k] for k in missing], limit=LIST_CAP + 1)
            return rows.then(
                lambda pages: {k: lists.encode(pages[keys[k]], LIST_CAP) for k in missing}
            )

        def shape(values: dict[str, bytes]) -> dict[int, lists.CachedList | None]:
            decoded: dict[int, lists.CachedList | None] = {}
            for key, from_id in keys.items():
                cached = lists.decode(values[key])
                if cached is None or len(cached.entries) > 4 * LIST_CAP:
                    invalidate(self._pool, [key])
                    cached = None
                decoded[from_id] = cached
            return decoded

        return Read(Through(self._pool, list(keys), load, lists.merge, self._cached.fills), shape)

    def page(
        self,
        from_id: int | str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        oldest_first: bool = False,
    ) -> Page:
        return self.reading_page(
            from_id, limit=limit, cursor=cursor, oldest_first=oldest_first
        ).run()

    def reading_page(
        self,
        from_id: int | str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        oldest_first: bool = False,
    ) -> Read[Page]:
        """``page`` as a read to make with others (``read_together``)."""
        from_id = self._cached.catalog.expect(from_id, self.relation.from_type)
        limit = check_limit(limit)

        def shape(found: dict[int, lists.CachedList | None]) -> Page:
            cached = found[from_id]
            page = cached.page(limit, cursor, oldest_first) if cached else None
            if page is None:  # past the cached newest entries
                return self._table.page(
                    from_id, limit=limit, cursor=cursor, oldest_first=oldest_first
                )
            return page

        return self._lists([from_id]).then(shape)

    def page_many(self, from_ids: Iterable[int | str], *, limit: int = 50) -> dict[int, Page]:
        return self.reading_pages(from_ids, limit=limit).run()

    def reading_pages(
        self, from_ids: Iterable[int | str], *, limit: int = 50
    ) -> Read[dict[int, Page]]:
        """``page_many`` as a read to make with others (``read_together``)."""
        wanted = self._cached.catalog.expect_all(from_ids, self.relation.from_type)
        limit = check_limit(limit)

        def shape(found: dict[int, lists.CachedList | None]) -> dict[int, Page]:
            pages = {f: c.page(limit, None, False) if c else None for f, c in found.items()}
            short = [f for f, p in pages.items() if p is None]
            complete = {f: p for f, p in pages.items() if p is not None}
            if short:  # past the cached entries, or not cached: MySQL, one query per shard
                complete.update(self._table.page_many(short, limit=limit))
            return complete

        return self._lists(list(dict.fromkeys(wanted))).then(shape)

    def count(self, from_id: int | str) -> int:
        from_id = self._cached.catalog.expect(from_id, self.relation.from_type)
        return self.count_many([from_id])[from_id]

    def count_many(self, from_ids: Iterable[int | str]) -> dict[int, int]:
        wanted = self._cached.catalog.expect_all(from_ids, self.relation.from_type)
        keys = {self.count_key(f): f for f in wanted}

        def load(missing: list[str]) -> Selects[dict[str, bytes]]:
            def counted() -> dict[str, bytes]:
                counts = self._table.count_many([keys[k] for k in missing])
                return {k: str(counts[keys[k]]).encode() for k in missing}

            return Selects.computed(counted)

        values = read_through(self._pool, list(keys), load, fills=self._cached.fills)
        return {keys[k]: int(v) for k, v in values.items()}

    def contains(self, from_id: int | str, to_id: int | str) -> bool:
        edge = (self.relation.name, from_id, to_id)
        return bool(self._cached.edges_exist([edge]))  # type: ignore[list-item]

    def filter(self, from_id: int | str, candidates: Iterable[int | str]) -> list[int]:
        return self._table.filter(from_id, candidates)

    def rows_many(
        self, from_ids: Iterable[int | str], *, limit: int
    ) -> dict[int, list[tuple[int, int]]]:
        return self._table.rows_many(from_ids, limit=limit)

    # maintenance reads go to the database (see MappingTableInterface)
    def rows_page(
        self,
        from_id: int | str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        oldest_first: bool = False,
    ) -> tuple[list[tuple[int, int]], str | None]:
        return self._table.rows_page(from_id, limit=limit, cursor=cursor, oldest_first=oldest_first)

    def scan(self, shard_id: int, *, batch: int = 1000) -> Iterator[list[tuple[int, int, int]]]:
        return self._table.scan(shard_id, batch=batch)

    def present(self, pairs: Iterable[tuple[int, int]]) -> set[tuple[int, int]]:
        return self._table.present(pairs)

    # -- writes ---------------------------------------------------------------

    def add(self, from_id: int | str, to_id: int | str, *, sequence: int | None = None) -> bool:
        sequence = now_sequence() if sequence is None else int(sequence)
        try:
            added = self._table.add(from_id, to_id, sequence=sequence)
        except ShardUnavailable:  # its outcome unknown (``forgetting``)
            self._forget(int(from_id), int(to_id), lists_too=True)
            raise
        f, t = int(from_id), int(to_id)
        # A process that stores nothing in the caches (Fills) drops the lists instead.
        appends = added and self._cached.fills.withheld() is None
        if appends:  # append the new entry; lists are never edited in the middle
            for mapping, a, b in self._both_ends(f, t):
                mapping._pool.append(mapping.list_key(a), lists.entry(b, sequence))
        # (a pair that existed may have had its inverse repaired: refill those lists)
        self._forget(f, t, lists_too=not appends)
        return added

    def remove(self, from_id: int | str, to_id: int | str) -> bool:
        with forgetting(lambda: self._forget(int(from_id), int(to_id), lists_too=True)):
            return self._table.remove(from_id, to_id)

    def repair_inverse(self, from_id: int | str, to_id: int | str) -> bool:
        # Whatever a crash left cached for either end (a list missing an append, an
        # edge or count from before the interrupted write) is dropped, changed or not.
        with forgetting(lambda: self._forget(int(from_id), int(to_id), lists_too=True)):
            return self._table.repair_inverse(from_id, to_id)

    def _both_ends(self, from_id: int, to_id: int) -> list[tuple[CachedMapping, int, int]]:
        ends = [(self, from_id, to_id)]
        if self.relation.inverse:
            ends.append((self._cached.mapping(self.relation.inverse), to_id, from_id))
        return ends

    def _forget(self, from_id: int, to_id: int, *, lists_too: bool) -> None:
        keys = []
        for mapping, a, b in self._both_ends(from_id, to_id):
            keys += [mapping.count_key(a), mapping.edge_key(a, b)]
            if lists_too:
                keys.append(mapping.list_key(a))
            # The object at this end caches its counts with it.
            self._cached.objects(mapping.relation.from_type).forget([a])
        invalidate(self._pool, keys)
