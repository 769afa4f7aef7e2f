"""Repair mapping pairs left half-written (a forward row without its inverse, or the reverse).

``MappingTable.add`` writes the forward row, then the inverse; ``remove``
deletes in the same order. The forward table is the truth: a forward row
missing its inverse gets one, and an inverse row with no forward row is an
orphan and is removed. Checks read the database, never a cache; repairs go
through ``repair_inverse``, the mapping's own count-keeping (and, on a cached
store, cache-invalidating) write, so running this beside live traffic is safe
and leaves no stale list, count or edge in memcached.

Runbook: ``python manage.py shardstore reconcile`` (every relation with an
inverse) after a crash, a host failure or a restore; it prints what it fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .interface import StoreInterface


@dataclass
class ReconcileReport:
    relation: str
    checked: int = 0
    missing_inverse: int = 0
    orphan_inverse: int = 0


def reconcile(
    store: StoreInterface,
    relation_name: str,
    *,
    repair: bool = True,
    shards: Iterable[int] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ReconcileReport:
    """Check (and unless ``repair=False``, fix) one forward relation against its inverse.

    ``shards`` limits it to those shards (a long job's chunk: shardstore/jobs.py); each
    shard is checked on its own, so a run over some shards is one slice of a full run.
    """
    relation = store.catalog.relation(relation_name)
    if not relation.inverse:
        raise ValueError(f"{relation_name} has no inverse to reconcile")
    forward, inverse = store.mapping(relation.name), store.mapping(relation.inverse)
    report = ReconcileReport(relation.name)
    walk = list(range(store.topology.shard_count) if shards is None else shards)
    for done, shard_id in enumerate(walk, 1):
        # Forward rows whose inverse is missing: write the inverse.
        for rows in forward.scan(shard_id):
            report.checked += len(rows)
            present = inverse.present((to_id, from_id) for from_id, to_id, _ in rows)
            for from_id, to_id, _ in rows:
                if (to_id, from_id) not in present:
                    report.missing_inverse += 1
                    if repair:
                        forward.repair_inverse(from_id, to_id)
        # Inverse rows with no forward row: orphans of an interrupted remove.
        for rows in inverse.scan(shard_id):
            report.checked += len(rows)
            present = forward.present((from_id, to_id) for to_id, from_id, _ in rows)
            for to_id, from_id, _ in rows:
                if (from_id, to_id) not in present:
                    report.orphan_inverse += 1
                    if repair:
                        forward.repair_inverse(from_id, to_id)
        if progress:
            progress(done, len(walk))
    return report
