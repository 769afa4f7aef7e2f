"""Long jobs' kinds: the work cut by shard, and each chunk run alone, and again, harmlessly.

The chunks of a job, run one by one, do what the whole operation does (reconcile) on the
contract store (sqlite and mysql, plain and cached), and a second run of every chunk finds
nothing left to do. The social model's kinds are tested with it (tests/social/test_jobs.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from shardstore import Store
from shardstore.interface import StoreInterface
from shardstore.jobs import Chunk, JobContext, JobError, JobKind, by_shard, kind, kinds, register

from .test_reconcile import folder_and_notes, half_add, half_remove


def run_all(name: str, context: JobContext, **params: Any) -> list[dict[str, int]]:
    """Every chunk of a job of kind ``name``, one after another: their summaries."""
    job = kind(name)
    checked = job.check(params)
    return [job.run_chunk(context, chunk, checked) for chunk in job.chunks(context, checked)]


def total(summaries: list[dict[str, int]], field: str) -> int:
    return sum(summary[field] for summary in summaries)


def test_the_work_is_cut_by_shard_in_runs_that_stay_on_one_range(plain_store: Store) -> None:
    context = JobContext(plain_store)  # 16 shards: [0, 7] on host A, [8, 15] on host B
    assert by_shard(context, {}) == [Chunk(n, n) for n in range(16)]
    assert by_shard(context, {"per_chunk": 3}) == [
        Chunk(0, 2), Chunk(3, 5), Chunk(6, 7), Chunk(8, 10), Chunk(11, 13), Chunk(14, 15),
    ]  # fmt: skip
    assert by_shard(context, {"shards": [5, 9], "per_chunk": 4}) == [Chunk(5, 7), Chunk(8, 9)]
    assert Chunk(3, 3).label == "shard 3" and Chunk(8, 9).label == "shards 8-9"
    for bad in ({"shards": [9, 5]}, {"shards": [0, 16]}, {"per_chunk": 0}, {"per_chunk": 65},
                {"shards": [1]}, {"shards": ["0", 3]}, {"per_chunk": True}):  # fmt: skip
        with pytest.raises(JobError):
            by_shard(context, bad)


def test_kinds_are_registered_once_by_name() -> None:
    assert "reconcile" in kinds()
    with pytest.raises(ValueError, match="two job kinds"):
        register(JobKind("reconcile", "again", lambda context, chunk, params: {}))
    with pytest.raises(JobError, match="no job kind 'nope'"):
        kind("nope")
    with pytest.raises(JobError, match="reconcile takes check, per_chunk, shards; not force"):
        kind("reconcile").check({"force": True})


def test_reconcile_chunks_repair_their_own_shards_and_a_second_run_finds_nothing(
    store: StoreInterface,
) -> None:
    folder, notes = folder_and_notes(store, 3)  # the folder on shard 2, its notes on shard 9
    forward = store.mapping("folder_has_notes")
    forward.add(folder, notes[0])
    forward.add(folder, notes[1])
    half_add(store, folder, notes[2])  # a forward row on shard 2 without its inverse
    half_remove(store, folder, notes[1])  # an inverse row on shard 9 without its forward row
    context = JobContext(store)
    job = kind("reconcile")

    check = run_all("reconcile", context, check=True)
    assert (total(check, "missing_inverse"), total(check, "orphan_inverse")) == (1, 1)
    assert not store.mapping("note_in_folder").contains(notes[2], folder)  # unchanged

    shard_9 = job.run_chunk(context, Chunk(9, 9), {})  # the orphan lives there
    assert (shard_9["missing_inverse"], shard_9["orphan_inverse"]) == (0, 1)
    shard_2 = job.run_chunk(context, Chunk(0, 7), {})  # the half-written add there
    assert (shard_2["missing_inverse"], shard_2["orphan_inverse"]) == (1, 0)
    assert store.mapping("note_in_folder").contains(notes[2], folder)
    assert not store.mapping("note_in_folder").contains(notes[1], folder)

    again = run_all("reconcile", context)
    assert (total(again, "missing_inverse"), total(again, "orphan_inverse")) == (0, 0)
    assert total(again, "checked") == 4  # two forward rows, and now their two inverses
