"""Repair mapping pairs left half-written (a forward row without its inverse, or the reverse).

``MappingTable.add`` writes the forward row, then the inverse; ``remove``
deletes in the same order. The forward table is the truth: a forward row
missing its inverse gets one, and an inverse row with no forward row is an
orphan and is removed. Both repairs are idempotent and go through the same
count-keeping writes, so running this beside live traffic is safe.

Runbook: ``python manage.py shardstore reconcile`` (every relation with an
inverse) after a crash, a host failure or a restore; it prints what it fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .ids import shard_of
from .mappings import _delete, _insert

if TYPE_CHECKING:
    from .store import Store


@dataclass
class ReconcileReport:
    relation: str
    checked: int = 0
    missing_inverse: int = 0
    orphan_inverse: int = 0


def reconcile(
    store: Store,
    relation_name: str,
    *,
    repair: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> ReconcileReport:
    """Check (and unless ``repair=False``, fix) one forward relation against its inverse."""
    relation = store.catalog.relation(relation_name)
    if not relation.inverse:
        raise ValueError(f"{relation_name} has no inverse to reconcile")
    forward, inverse = relation.name, relation.inverse
    report = ReconcileReport(relation.name)
    shards = store.topology.shard_count
    for shard_id in range(shards):
        # Forward rows whose inverse is missing: write the inverse.
        for rows in store.mapping(forward).scan(shard_id):
            report.checked += len(rows)
            for from_id, to_id, sequence in _missing(
                store, inverse, [(t, f, s) for f, t, s in rows]
            ):
                report.missing_inverse += 1
                if repair:
                    with store.session(shard_of(from_id), write=True) as session:
                        _insert(session, inverse, from_id, to_id, sequence)
        # Inverse rows with no forward row: orphans of an interrupted remove.
        for rows in store.mapping(inverse).scan(shard_id):
            report.checked += len(rows)
            for to_id, from_id, _ in _missing(store, forward, [(t, f, s) for f, t, s in rows]):
                report.orphan_inverse += 1
                if repair:
                    with store.session(shard_of(from_id), write=True) as session:
                        _delete(session, inverse, from_id, to_id)
        if progress:
            progress(shard_id + 1, shards)
    return report


def _missing(
    store: Store, table: str, pairs: list[tuple[int, int, int]]
) -> list[tuple[int, int, int]]:
    """The (from_id, to_id, sequence) triples with no row in ``table``: one query per shard."""
    by_shard: dict[int, list[tuple[int, int, int]]] = {}
    for triple in pairs:
        by_shard.setdefault(shard_of(triple[0]), []).append(triple)
    missing = []
    for shard_id, triples in by_shard.items():
        keys = " OR ".join(["(from_id = %s AND to_id = %s)"] * len(triples))
        params = [value for f, t, _ in triples for value in (f, t)]
        with store.session(shard_id) as session:
            present = {
                (int(f), int(t))
                for f, t in session.query(
                    f"SELECT from_id, to_id FROM {{db}}.{table} WHERE {keys}", params
                )
            }
        missing += [triple for triple in triples if (triple[0], triple[1]) not in present]
    return missing
