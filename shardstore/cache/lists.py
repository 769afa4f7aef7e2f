"""Mapping lists cached as MessagePack, appended to on add and never edited in the middle.

A cached list is a header followed by ``[to_id, sequence]`` entries::

    ["L", complete, floor_sequence, floor_to_id] [to_id, seq] [to_id, seq] ...

It is filled with the newest ``cap`` entries of the list; ``complete`` says
whether that was all of it, and the floor is the oldest entry filled (an
incomplete list answers only pages above its floor). An add appends one
entry (memcached APPEND: concatenated MessagePack is a stream). A removal
deletes the whole key, and the next read refills it: never an edit in the
middle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import msgpack

from .. import cursors
from ..interface import Page

HEADER = "L"


@dataclass(frozen=True)
class CachedList:
    entries: list[tuple[int, int]]  # (sequence, to_id), newest first, unique to_ids
    complete: bool
    floor: tuple[int, int] | None  # (sequence, to_id) of the oldest filled entry

    def page(self, limit: int, cursor: str | None, oldest_first: bool) -> Page | None:
        """The page, or None when it reaches past what this list holds."""
        entries = self.entries
        if oldest_first:
            if not self.complete:
                return None
            entries = entries[::-1]
        start = 0
        if cursor is not None:
            position = cursors.decode(cursor)
            start = next(
                (
                    i
                    for i, entry in enumerate(entries)
                    if (entry > position if oldest_first else entry < position)
                ),
                len(entries),
            )
        chunk = entries[start : start + limit + 1]
        if len(chunk) <= limit and not self.complete:
            return None  # the rest of this page is below the floor
        ids = [to_id for _, to_id in chunk[:limit]]
        if len(chunk) <= limit:
            return Page(ids, None)
        last_sequence, last_id = chunk[limit - 1]
        return Page(ids, cursors.encode(last_sequence, last_id))


def encode(rows: list[tuple[int, int]], cap: int) -> bytes:
    """A list value from ``rows`` of (to_id, sequence), newest first, at most ``cap + 1`` long."""
    complete = len(rows) <= cap
    kept = rows[:cap]
    floor = [kept[-1][1], kept[-1][0]] if kept and not complete else [None, None]
    out = [msgpack.packb([HEADER, complete, *floor])]
    out += [msgpack.packb([to_id, sequence]) for to_id, sequence in reversed(kept)]
    return b"".join(out)


def entry(to_id: int, sequence: int) -> bytes:
    """The bytes an add appends."""
    packed: bytes = msgpack.packb([to_id, sequence])
    return packed


def decode(value: bytes) -> CachedList | None:
    """The list, or None if the value is not one (then it is refilled)."""
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    unpacker.feed(value)
    try:
        items = list(unpacker)
    except Exception:  # noqa: BLE001 - corrupt or foreign value: refill
        return None
    return _from_items(items)


def _from_items(items: list[object]) -> CachedList | None:
    if not items or not isinstance(items[0], list) or items[0][:1] != [HEADER]:
        return None
    _, complete, floor_sequence, floor_to = items[0]
    floor = None if floor_sequence is None else (floor_sequence, floor_to)
    latest: dict[int, int] = {}
    for to_id, sequence in cast("list[tuple[int, int]]", items[1:]):
        latest[to_id] = sequence
    entries = sorted(((s, t) for t, s in latest.items()), reverse=True)
    if floor is not None:
        entries = [e for e in entries if e >= floor]
    return CachedList(entries, bool(complete), floor)


def merge(loaded: bytes, appended: bytes) -> bytes:
    """A filled list plus the entries appended to its claim while it was being read."""
    return loaded + appended
