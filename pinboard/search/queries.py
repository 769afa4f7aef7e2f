"""Search: a page of IDs from the index, then the objects themselves from the store, each
shown only to whom may see it.

The index answers with IDs; the objects come from the store's multi-gets (cached, as on
every page), which leave out what was deleted meanwhile, and ``boards.privacy`` decides
who sees a secret board and its pins, at every read: the index also leaves secret
documents out for anyone but their owner, but an index a moment behind a board made
secret must not show it either.

Paging is by position, bounded: a cursor holds how many results the pages before took
and the time of the first page (``as_of``; the index leaves out documents made after
it, so a pin made while a pinner scrolls does not push what they saw onto the next
page). Not a keyset on (score, time, id): relevance is computed from the whole index's
statistics (BM25 in SQLite, InnoDB's TF-IDF), so any write can move every score, and
both engines rank every match for any page anyway; a keyset would cost as much and be
no steadier. A result deleted, or edited out of the query, between two pages shifts the
rest by one; search goes ``MAX_DEPTH`` results deep, where nobody scrolls.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from shardstore import InvalidCursor, cursors
from shardstore.cache import Read
from social.rules import may_see

from ..boards.privacy import ShownPins, visible_pins
from ..boards.queries import get_boards
from ..entities import Board, User
from ..pins.queries import get_pins
from ..users.queries import get_users, reading_users
from .plane import search_index
from .words import Query

#: How deep a search goes: past this many results there is no next page.
MAX_DEPTH = 1000
#: The page and API types of result, by the kind of document each is.
KINDS = {"pins": "pin", "boards": "board", "pinners": "user"}


@dataclass(frozen=True)
class Position:
    """Where a page of results starts: after ``offset`` results of the search made at
    ``as_of`` (microseconds since the epoch)."""

    as_of: int
    offset: int


def position(cursor: str | None) -> Position:
    """The first page's position, or the one ``cursor`` names; InvalidCursor if it is not
    one of ours (it has the shape of the store's cursors, so one decoder checks both)."""
    if cursor is None:
        return Position(time.time_ns() // 1000, 0)
    as_of, offset = cursors.decode(cursor)
    if as_of <= 0 or not 0 < offset < MAX_DEPTH:
        raise InvalidCursor(f"cursor {cursor!r} is not a search's")
    return Position(as_of, offset)


def found_ids(
    kind: str, viewer_id: int | None, query: Query, at: Position, limit: int
) -> tuple[list[int], str | None]:
    """A page of the IDs the index finds, and the next page's cursor (None on the last)."""
    limit = min(limit, MAX_DEPTH - at.offset)
    ids = search_index().search(
        kind, query, viewer_id=viewer_id, as_of=at.as_of, offset=at.offset, limit=limit + 1
    )
    end = at.offset + limit
    more = len(ids) > limit and end < MAX_DEPTH
    return ids[:limit], cursors.encode(at.as_of, end) if more else None


def found_pins(
    viewer_id: int | None, query: Query, at: Position, *, limit: int = 50
) -> tuple[ShownPins, str | None]:
    """Pins whose description or board's name holds the words, that the viewer may see."""
    ids, cursor = found_ids("pin", viewer_id, query, at, limit)
    return visible_pins(viewer_id, get_pins(ids)), cursor


def found_boards(
    viewer_id: int | None, query: Query, at: Position, *, limit: int = 50
) -> tuple[list[Board], str | None]:
    """Boards whose name or description holds the words, that the viewer may see."""
    ids, cursor = found_ids("board", viewer_id, query, at, limit)
    return [board for board in get_boards(ids) if may_see(viewer_id, board)], cursor


def found_pinners(
    viewer_id: int | None, query: Query, at: Position, *, limit: int = 50, counts: bool = False
) -> tuple[list[User], str | None]:
    """Pinners whose username, display name or about text holds the words."""
    ids, cursor = found_ids("user", viewer_id, query, at, limit)
    return get_users(ids, counts=counts), cursor


def owners_of(boards: list[Board]) -> dict[int, User]:
    """The boards' owners, with their counts (a board's followers include its owner's), by
    ID; an account deleted a moment ago is missing, and its boards go with it."""
    return reading_owners_of(boards).run()


def reading_owners_of(boards: list[Board]) -> Read[dict[int, User]]:
    """``owners_of`` as a read to make with others."""
    owner_ids = sorted({board["owner_id"] for board in boards})
    return reading_users(owner_ids, counts=True).then(lambda found: {u["id"]: u for u in found})
