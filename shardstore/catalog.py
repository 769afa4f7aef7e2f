"""How a user of the library declares its data: object types, mapping tables and lookups.

A site declares one ``Catalog`` and hands it to every ``Store`` it opens. Every shard
holds every table the catalog names. A new relation is a new entry (and so a new table
on every shard, made by ``shardstore init``), never an ALTER.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .exceptions import UnknownRelation, UnknownType, WrongType
from .ids import MAX_OBJECT_ID, MAX_TYPE_ID, TYPE_SHIFT, decompose, parse


@dataclass(frozen=True)
class ObjectType:
    """An object kind: its number in IDs, its table on every shard, and the cache pool
    (``CachedStore``) that holds its objects and the lookups that lead to them."""

    name: str
    type_id: int
    table: str
    pool: str = "objects"


@dataclass(frozen=True)
class Relation:
    """A one-directional mapping table ``noun_verb_noun`` stored on the from-ID's shard.

    ``inverse`` names the table holding the reverse edges on the to-ID's shard.
    Writes go through the forward table only: the store writes the forward row,
    then the inverse row, and ``reconcile`` makes the inverse table agree with
    the forward one if a crash fell between the two. ``inverse_of`` marks such
    a read-only inverse table.
    """

    name: str
    from_type: str
    to_type: str
    inverse: str | None = None
    inverse_of: str | None = None


@dataclass(frozen=True)
class Lookup:
    """A mod-shard table from a unique external key to an object ID."""

    name: str
    object_type: str
    normalize: Callable[[str], str] = field(default=str.casefold)

    @property
    def table(self) -> str:
        return f"lookup_{self.name}"


class Catalog:
    """Types, relations and lookups, checked for consistency once."""

    def __init__(
        self, types: Iterable[ObjectType], relations: Iterable[Relation], lookups: Iterable[Lookup]
    ) -> None:
        self.types = {t.name: t for t in types}
        self.types_by_id = {t.type_id: t for t in self.types.values()}
        self.relations = {r.name: r for r in relations}
        self.lookups = {lk.name: lk for lk in lookups}
        self._check()

    def type(self, name: str) -> ObjectType:
        try:
            return self.types[name]
        except KeyError:
            raise UnknownType(f"no object type named {name!r}") from None

    def relation(self, name: str) -> Relation:
        try:
            return self.relations[name]
        except KeyError:
            raise UnknownRelation(f"no mapping table named {name!r}") from None

    def lookup(self, name: str) -> Lookup:
        try:
            return self.lookups[name]
        except KeyError:
            raise UnknownRelation(f"no lookup named {name!r}") from None

    def expect(self, object_id: int | str, type_name: str) -> int:
        """``object_id`` as an int, if it is a well-formed ID of type ``type_name``.

        Raises InvalidId for a malformed ID and WrongType for another type's ID.
        """
        # The common case, an int of the right type, in a few operations: this
        # runs once per ID on every read path.
        if (
            type(object_id) is int
            and 0 <= object_id <= MAX_OBJECT_ID
            and object_id >> TYPE_SHIFT & MAX_TYPE_ID == self.type(type_name).type_id
        ):
            return object_id
        fields = decompose(object_id)
        expected = self.type(type_name)
        if fields.type_id != expected.type_id:
            actual = self.types_by_id.get(fields.type_id)
            actual_name = actual.name if actual else f"unknown type {fields.type_id}"
            raise WrongType(f"expected a {type_name} ID, got a {actual_name} ID ({object_id})")
        return parse(object_id)

    def expect_all(self, object_ids: Iterable[int | str], type_name: str) -> list[int]:
        """``expect`` for each ID, in order."""
        expect = self.expect
        return [expect(object_id, type_name) for object_id in object_ids]

    def type_of(self, object_id: int) -> ObjectType:
        """The registered type of an ID."""
        type_id = decompose(object_id).type_id
        try:
            return self.types_by_id[type_id]
        except KeyError:
            raise UnknownType(f"type {type_id} of ID {object_id} is not registered") from None

    def _check(self) -> None:
        for t in self.types.values():
            if not 0 < t.type_id <= MAX_TYPE_ID:
                raise ValueError(f"type {t.name}: type_id {t.type_id} out of range")
        if len(self.types_by_id) != len(self.types):
            raise ValueError("two object types share a type_id")
        for relation in self.relations.values():
            for end in (relation.from_type, relation.to_type):
                self.type(end)
            if relation.inverse is not None:
                inverse = self.relation(relation.inverse)
                if (inverse.from_type, inverse.to_type) != (relation.to_type, relation.from_type):
                    raise ValueError(f"{relation.name}: inverse {inverse.name} has mismatched ends")
                if inverse.inverse_of != relation.name:
                    raise ValueError(f"{inverse.name} must be declared inverse_of={relation.name}")
        for lookup in self.lookups.values():
            self.type(lookup.object_type)
        tables = [t.table for t in self.types.values()]
        tables += list(self.relations) + [lk.table for lk in self.lookups.values()]
        if len(set(tables)) != len(tables):
            raise ValueError("two catalog entries share a table name")

    def tables(self) -> list[str]:
        """Every table a shard holds, for schema creation and operators' stats."""
        return (
            [t.table for t in self.types.values()]
            + list(self.relations)
            + [lk.table for lk in self.lookups.values()]
        )


def inverse_pair(forward: str, inverse: str, from_type: str, to_type: str) -> list[Relation]:
    """A mapping table and the read-only inverse the store keeps with it."""
    return [
        Relation(forward, from_type, to_type, inverse=inverse),
        Relation(inverse, to_type, from_type, inverse_of=forward),
    ]
