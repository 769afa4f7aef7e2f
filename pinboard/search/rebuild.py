"""The index made again from the shards, shard by shard: for a new index, one restored from
a backup, or after tasks were lost.

Each shard's pinners, boards and pins are read in ID order (``objects.scan``, from the
database, not the caches) and compared with the index's documents of the same IDs: a
document that differs from the object's is written, one whose object is gone is
removed. So the index stays in use while it is rebuilt, and rebuilding a current index
writes nothing. The documents are the tasks' own (``documents``); a pin is indexed
with its board, which lives on its shard.

After each shard the index records the next one to do (``search_state``): a rebuild
cut short (a crash, a deploy, Ctrl-C) resumes there when run again, unless told to
start over. A rebuild that wrote merges the index's pieces at the end
(``SearchIndex.optimize``). A check compares alone and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import cast

from shardstore import compose
from shardstore.ids import MAX_LOCAL_ID
from shardstore.interface import StoreInterface

from ..catalog import CATALOG
from ..entities import Board, Pin, User
from .documents import board_document, pin_document, user_document
from .index import Document, SearchIndex

#: Where the index keeps a rebuild's progress: "<next shard>/<shard count>".
PROGRESS = "rebuild"
#: Objects read from a shard at a time.
BATCH = 1000
#: Differences a check lists (it counts them all).
DRIFT_SHOWN = 20


@dataclass
class Report:
    first_shard: int = 0  # where the walk began (a resumed rebuild's first shard)
    shards: int = 0
    checked: int = 0  # documents of live objects compared
    written: int = 0  # missing or different (a check: that would be written)
    removed: int = 0  # documents of objects gone (a check: that would be removed)
    drift: list[str] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return bool(self.written or self.removed)

    def note(self, what: str) -> None:
        if len(self.drift) < DRIFT_SHOWN:
            self.drift.append(what)


def rebuild(
    store: StoreInterface,
    index: SearchIndex,
    *,
    repair: bool = True,
    restart: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """Make the index agree with the shards (with ``repair=False``, report how it does not),
    from the shard a cut-short rebuild got to unless ``restart``."""
    shard_count = store.topology.shard_count
    first = 0 if restart or not repair else resume_point(index, shard_count)
    report = Report(first_shard=first)
    for shard_id in range(first, shard_count):
        sync_shard(store, index, shard_id, report, repair=repair)
        report.shards += 1
        if repair:
            index.set_state(PROGRESS, f"{shard_id + 1}/{shard_count}")
        if progress is not None:
            progress(shard_id + 1, shard_count)
    if repair:
        index.set_state(PROGRESS, None)
        if report.differs:
            index.optimize()
    return report


def resume_point(index: SearchIndex, shard_count: int) -> int:
    """The shard a cut-short rebuild was to do next (0 if none was, or on another map)."""
    saved = index.state(PROGRESS) or ""
    next_shard, _, of = saved.partition("/")
    if next_shard.isdigit() and of == str(shard_count) and int(next_shard) < shard_count:
        return int(next_shard)
    return 0


def sync_shard(
    store: StoreInterface, index: SearchIndex, shard_id: int, report: Report, *, repair: bool
) -> None:
    """The documents of one shard's pinners, boards and pins, compared and repaired."""
    users = cast("Iterator[list[User]]", store.objects("user").scan(shard_id, batch=BATCH))
    _sync_kind(index, "user", shard_id, ((b, [user_document(u) for u in b]) for b in users),
               report, repair=repair)  # fmt: skip
    boards: dict[int, Board] = {}
    _sync_kind(index, "board", shard_id, _board_batches(store, shard_id, boards), report,
               repair=repair)  # fmt: skip
    _sync_kind(index, "pin", shard_id, _pin_batches(store, shard_id, boards), report,
               repair=repair)  # fmt: skip


Batches = Iterator[tuple[Sequence[User | Board | Pin], list[Document]]]


def _board_batches(store: StoreInterface, shard_id: int, boards: dict[int, Board]) -> Batches:
    """The shard's boards and their documents, keeping each board for its pins."""
    for batch in cast("Iterator[list[Board]]", store.objects("board").scan(shard_id, batch=BATCH)):
        boards.update((board["id"], board) for board in batch)
        yield batch, [board_document(board) for board in batch]


def _pin_batches(store: StoreInterface, shard_id: int, boards: dict[int, Board]) -> Batches:
    """The shard's pins and their documents; a pin whose board is gone has none (as the
    task that indexes it forgets it)."""
    for batch in cast("Iterator[list[Pin]]", store.objects("pin").scan(shard_id, batch=BATCH)):
        elsewhere = sorted({pin["board_id"] for pin in batch} - set(boards))
        if elsewhere:  # a pin lives on its board's shard: this is only in case one did not
            found = cast("list[Board]", store.objects("board").get_many(elsewhere))
            boards.update((b["id"], b) for b in found)
        documents = [
            pin_document(pin, boards[pin["board_id"]]) for pin in batch if pin["board_id"] in boards
        ]
        yield batch, documents


def _sync_kind(
    index: SearchIndex, kind: str, shard_id: int, batches: Batches, report: Report, *, repair: bool
) -> None:
    """Merge the objects' documents, batch by batch in ID order, with the index's documents
    of the same span of IDs (the last span runs to the end of the shard's IDs)."""
    type_id = CATALOG.type(kind).type_id
    start, end = compose(shard_id, type_id, 0), compose(shard_id, type_id, MAX_LOCAL_ID)
    for objects, documents in batches:
        if objects:
            last = objects[-1]["id"]
            _compare(index, kind, start, last, documents, report, repair=repair)
            start = last + 1
    _compare(index, kind, start, end, [], report, repair=repair)


def _compare(
    index: SearchIndex,
    kind: str,
    first_id: int,
    last_id: int,
    live: list[Document],
    report: Report,
    *,
    repair: bool,
) -> None:
    indexed = {doc.id: doc for doc in index.documents(kind, first_id, last_id)}
    different = [doc for doc in live if indexed.pop(doc.id, None) != doc]
    gone = sorted(indexed)
    report.checked += len(live)
    report.written += len(different)
    report.removed += len(gone)
    for doc in different:
        report.note(f"{kind} {doc.id}: missing or different")
    for object_id in gone:
        report.note(f"{kind} {object_id}: indexed, but gone")
    if repair:
        index.upsert(different)
        index.delete(kind, gone)
