"""The SQL vocabulary every backend shares: its dialect, the tables of a shard, the unique
key error, and how reads are batched into UNION ALLs."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..exceptions import ShardStoreError

T = TypeVar("T")


class UniqueViolation(ShardStoreError):
    """A write hit a unique key (internal: callers translate it, e.g. into DuplicateKey)."""


@dataclass(frozen=True)
class Dialect:
    """The few SQL fragments where MySQL and SQLite differ."""

    insert_ignore: str  # "INSERT IGNORE" / "INSERT OR IGNORE"
    max_union: int  # how many SELECTs one UNION ALL may join
    for_update: str  # row lock on a read inside a write transaction
    begin: str  # start a write transaction
    add_to_count: str  # upsert into mapping_counts: (from_id, relation, delta)
    count_object: str  # an aggregate of a group of mapping_counts rows: {"relation": n}
    several_statements: bool  # whether the driver sends several statements in one round trip


@dataclass(frozen=True)
class TableSet:
    """The tables every shard holds, by kind (derived from the catalog)."""

    objects: Sequence[str]
    mappings: Sequence[str]
    lookups: Sequence[str]


def batched(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """``items`` in consecutive slices of at most ``size`` (a UNION ALL per slice)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
