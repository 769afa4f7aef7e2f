"""The host page: the shards a host masters, with exact row counts of every table.

Counts are exact for the shards on the page (one ``UNION ALL`` of
``COUNT(*)``s per shard: 64 round trips for a page of 64 shards), never for
the whole host, whose shards may hold billions of rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shardstore import ShardStoreError, Store, Topology
from shardstore.topology import database_name

from ...catalog import CATALOG

SHARDS_PER_PAGE = 64
OBJECT_TABLES = [t.table for t in CATALOG.types.values()]
MAPPING_TABLES = list(CATALOG.relations)
_COUNT_SQL = " UNION ALL ".join(
    f"SELECT '{table}', COUNT(*) FROM {{db}}.{table}" for table in OBJECT_TABLES + MAPPING_TABLES
)


@dataclass(frozen=True)
class ShardCounts:
    shard: int
    database: str
    objects: list[int]  # in OBJECT_TABLES order
    mappings: list[tuple[str, int]]  # (table, rows) of the tables that have any
    mapping_rows: int
    error: str = ""  # the shard could not be read


def shards_of(topology: Topology, host: str) -> list[int]:
    """Every shard ``host`` masters (empty for a replica or a spare)."""
    return list(topology.shards_of(host))


def shard_counts(store: Store, shards: Sequence[int]) -> list[ShardCounts]:
    counted = []
    for shard in shards:
        database = database_name(shard)
        try:
            with store.session(shard) as session:
                rows = dict(session.query(_COUNT_SQL))
        except ShardStoreError as exc:
            counted.append(ShardCounts(shard, database, [], [], 0, str(exc)))
            continue
        mappings = [(table, int(rows[table])) for table in MAPPING_TABLES if rows[table]]
        counted.append(
            ShardCounts(
                shard,
                database,
                [int(rows[table]) for table in OBJECT_TABLES],
                mappings,
                sum(n for _, n in mappings),
            )
        )
    return counted


def totals(counted: Sequence[ShardCounts]) -> list[int]:
    """Each object table's rows over these shards, then all their mapping rows."""
    readable = [c for c in counted if not c.error]
    columns = [sum(c.objects[i] for c in readable) for i in range(len(OBJECT_TABLES))]
    return [*columns, sum(c.mapping_rows for c in readable)]
