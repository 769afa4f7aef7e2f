"""Object tables: ``local_id`` auto-increment key, a JSON ``data`` blob, ``ts``.

Create inserts the JSON on a chosen shard and composes the full ID from the new
local id. Update is read-modify-write in one transaction with the row locked.
Delete is soft (``"active": false``, hidden from reads) unless ``hard=True``.

Reads can bring an object's mapping counts along (``counts=("album_has_photos",)``)
in the same round trip, as one sub-query per object on its own shard (its count
rows, aggregated): an album and its photo count cost one query, not two.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from .catalog import ObjectType
from .exceptions import NotFound, ObjectTooLarge
from .idempotency import IdempotencyKey, record
from .ids import MAX_LOCAL_ID, compose, decompose, group_by_shard
from .interface import Changes, ShardAccess
from .selects import Rows, Select, Selects

if TYPE_CHECKING:
    from .backends import Session

#: The largest JSON blob accepted, on every backend alike (MySQL's max_allowed_packet is larger).
MAX_OBJECT_BYTES = 1 << 20


def _encode(data: Mapping[str, Any], object_id: int | None = None) -> str:
    """The JSON to store. ``id`` is derived from the row, so it is not stored (an object
    read and written back carries its own); ``counts`` only ever comes from a read."""
    if not isinstance(data, Mapping):
        raise TypeError(f"object data must be a mapping, not {type(data).__name__}")
    if "counts" in data:
        raise ValueError("'counts' is reserved: reads put mapping counts there")
    if "id" in data and data["id"] != object_id:
        raise ValueError("'id' is reserved: an object's ID comes from its row")
    text = json.dumps({k: v for k, v in data.items() if k != "id"}, separators=(",", ":"))
    size = len(text.encode())
    if size > MAX_OBJECT_BYTES:
        raise ObjectTooLarge(f"object JSON is {size} bytes, over the {MAX_OBJECT_BYTES} byte limit")
    return text


def _decode(object_id: int, text: str | bytes) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(text)
    data["id"] = object_id
    return data


def _counts(count_object: str | bytes | None, wanted: Sequence[str]) -> dict[str, int]:
    """The ``wanted`` counts from a ``{"relation": n}`` object (0 for a relation with no
    row: nothing was ever added to it)."""
    found = orjson.loads(count_object) if count_object else {}
    return {relation: int(found.get(relation, 0)) for relation in wanted}


def is_active(data: Mapping[str, Any]) -> bool:
    return data.get("active", True) is not False


class ObjectTable:
    """The rows of one object type, spread over every shard."""

    def __init__(self, store: ShardAccess, object_type: ObjectType) -> None:
        self._store = store
        self.type = object_type
        table = object_type.table
        self._insert = f"INSERT INTO {{db}}.{table} (data) VALUES (%s)"
        self._select_one = f"SELECT data FROM {{db}}.{table} WHERE local_id = %s"
        # A sub-query on the object's own shard: its count rows, as {"relation": n}.
        self._counts_column = (
            ", (SELECT {count_object} FROM {db}.mapping_counts c"
            f" WHERE c.from_id = %s + {table}.local_id)"
        )
        self._update = f"UPDATE {{db}}.{table} SET data = %s WHERE local_id = %s"
        self._delete = f"DELETE FROM {{db}}.{table} WHERE local_id = %s"
        self._scan = f"SELECT local_id, data FROM {{db}}.{table} WHERE local_id > %s ORDER BY local_id LIMIT %s"

    def create(
        self, shard_id: int, data: Mapping[str, Any], *, key: IdempotencyKey | None = None
    ) -> int:
        """Insert ``data`` on ``shard_id`` and return the new object's full ID.

        With an idempotency ``key``, the object and the key's row are one transaction
        (``idempotency.py``): ``AlreadyCreated`` (nothing written) if the key names an
        object already, ``KeyReused`` if it was sent with another request."""
        if key is None:
            text = _encode(data)
            with self._store.session(shard_id) as session:
                local_id = session.insert(self._insert, (text,))
            return compose(shard_id, self.type.type_id, local_id)
        return self._store.transaction(
            shard_id, lambda session: self.insert(session, shard_id, data, key=key)
        )

    def insert(
        self,
        session: Session,
        shard_id: int,
        data: Mapping[str, Any],
        *,
        key: IdempotencyKey | None = None,
    ) -> int:
        """``create``'s statements in a write session of the caller's on ``shard_id``
        (committed with the rest of its transaction). Returns the new object's full ID."""
        object_id = compose(shard_id, self.type.type_id, session.insert(self._insert, (_encode(data),)))  # fmt: skip
        if key is not None:
            record(session, key, object_id)
        return object_id

    def get(
        self, object_id: int | str, *, include_inactive: bool = False, counts: Sequence[str] = ()
    ) -> dict[str, Any] | None:
        """The object (with its ``id``), or None if it does not exist or is soft-deleted."""
        found = self.get_many([object_id], include_inactive=include_inactive, counts=counts)
        return found[0] if found else None

    def get_many(
        self,
        object_ids: Iterable[int | str],
        *,
        include_inactive: bool = False,
        counts: Sequence[str] = (),
    ) -> list[dict[str, Any]]:
        """Objects in the order asked, missing ones left out: one statement per host touched
        (its shards' SELECTs in one UNION ALL, ``Store.read_groups``).

        ``counts`` names mapping tables whose count for each object is read in
        the same query and returned under ``data["counts"]``.
        """
        wanted = self._store.catalog.expect_all(object_ids, self.type.name)
        for relation in counts:
            if self._store.catalog.relation(relation).from_type != self.type.name:
                raise ValueError(f"{relation} does not map from {self.type.name}")
        found: dict[int, dict[str, Any]] = {}
        stored = self.stored_many(wanted, counts=bool(counts))
        for object_id, (text, count_object) in stored.items():
            data = _decode(object_id, text)
            if counts:
                data["counts"] = _counts(count_object, counts)
            if include_inactive or is_active(data):
                found[object_id] = data
        return [found[object_id] for object_id in wanted if object_id in found]

    def stored_many(
        self, object_ids: Sequence[int], *, counts: bool
    ) -> dict[int, tuple[str | bytes, str | bytes | None]]:
        """What MySQL holds of each object found (deleted ones too), by ID: its stored JSON
        and, with ``counts``, the counts of every mapping from it as a JSON object (None for
        none). One statement per read group of shards. The cache keeps them as they come
        (cache/tables.py), without decoding them."""
        return self.selecting_stored(object_ids, counts=counts).run()

    def selecting_stored(
        self, object_ids: Sequence[int], *, counts: bool
    ) -> Selects[dict[int, tuple[str | bytes, str | bytes | None]]]:
        """``stored_many`` as SELECTs to run with others (``selects.run_together``): a
        read group's shards in one UNION ALL."""
        by_shard = group_by_shard(object_ids)
        selects = []
        for shards in self._store.read_groups(by_shard):
            count_object = self._store.dialect(shards[0]).count_object if counts else ""
            parts, params = [], []
            for shard_id in shards:
                sql, shard_params = self._select_many(shard_id, by_shard[shard_id], count_object)
                parts.append(sql)
                params += shard_params
            wanted = frozenset(i for shard_id in shards for i in by_shard[shard_id])
            selects.append(Select(shards[0], " UNION ALL ".join(parts), params, wanted, len(parts)))

        def answer(found: list[Rows]) -> dict[int, tuple[str | bytes, str | bytes | None]]:
            return {row[0]: (row[1], row[2] if counts else None) for rows in found for row in rows}

        return Selects(self._store, selects, answer)

    def _select_many(
        self, shard_id: int, ids: list[int], count_object: str
    ) -> tuple[str, list[Any]]:
        """A SELECT of these objects of one shard (full ID, data, and with ``count_object``,
        the dialect's aggregate, their counts, else NULL), naming its database, so that
        several shards of a host, and several tables, can be read in one UNION ALL."""
        base = compose(shard_id, self.type.type_id, 0)
        db = self._store.database(shard_id)
        columns = ", NULL"
        if count_object:
            columns = self._counts_column.replace("{db}", db).replace(
                "{count_object}", count_object
            )
        marks = ",".join(["%s"] * len(ids))
        sql = (
            f"SELECT %s + local_id, data{columns} FROM {db}.{self.type.table}"
            f" WHERE local_id IN ({marks})"
        )
        params = [base, base] if count_object else [base]
        return sql, params + [object_id & MAX_LOCAL_ID for object_id in ids]

    def scan(
        self, shard_id: int, *, batch: int = 1000, include_inactive: bool = False
    ) -> Iterator[list[dict[str, Any]]]:
        """Every object of this type on one shard, in ID order, ``batch`` rows at a time
        (for rebuilds and backfills); soft-deleted ones only with ``include_inactive``. A
        batch may hold fewer objects than ``batch`` (deleted ones are passed over)."""
        base = compose(shard_id, self.type.type_id, 0)
        last = 0
        while True:
            with self._store.session(shard_id) as session:
                rows = session.query(self._scan, (last, batch))
            if not rows:
                return
            last = int(rows[-1][0])
            objects = [_decode(base + int(local_id), text) for local_id, text in rows]
            yield [data for data in objects if include_inactive or is_active(data)]

    def update(self, object_id: int | str, changes: Changes) -> dict[str, Any]:
        """Read-modify-write in one transaction; ``changes`` is a dict to merge or a function
        that edits the data in place (run again if the transaction is retried after a
        lock conflict). Returns the new data. NotFound if absent or deleted."""
        object_id = self._store.catalog.expect(object_id, self.type.name)
        shard_id, _, local_id = decompose(object_id)

        def read_modify_write(session: Session) -> dict[str, Any]:
            rows = session.query(self._select_one + session.dialect.for_update, (local_id,))
            data = _decode(object_id, rows[0][0]) if rows else None
            if data is None or not is_active(data):
                raise NotFound(f"{self.type.name} {object_id} does not exist")
            if callable(changes):
                changes(data)
            else:
                data.update(changes)
            session.execute(self._update, (_encode(data, object_id), local_id))
            data["id"] = object_id
            return data

        return self._store.transaction(shard_id, read_modify_write)

    def delete(self, object_id: int | str, *, hard: bool = False) -> bool:
        """Soft-delete (``active: false``), or remove the row with ``hard=True``.

        Returns whether an object was there to delete.
        """
        if not hard:
            try:
                self.update(object_id, {"active": False})
            except NotFound:
                return False
            return True
        object_id = self._store.catalog.expect(object_id, self.type.name)
        shard_id, _, local_id = decompose(object_id)
        with self._store.session(shard_id) as session:
            return bool(session.execute(self._delete, (local_id,)) > 0)
