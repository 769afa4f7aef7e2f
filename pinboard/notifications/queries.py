"""Reading notifications: entries from Redis, then what they name as it is now, through
the cache pools.

A page of entries is looked up in a few multi-gets, whatever its length: the comments,
the pins (those liked or saved, and those commented on), their boards and the boards
followed, then the actors. An entry whose actor or object is gone, or that the pinner
may no longer see (``boards.privacy.may_see``), is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NotRequired, TypedDict

from social.notifications import Entry
from social.rules import may_see

from ..boards.queries import get_boards
from ..data_plane import get_notifications
from ..entities import Board, Comment, Pin, User
from ..pins.queries import get_comments, get_pins
from ..users.queries import get_users
from .kinds import BOARD_FOLLOW, COMMENT, FOLLOW, INVITE, ON_BOARDS, ON_PINS

#: Beyond this many, the count shows as "99+".
MOST_SHOWN = 99


class NotificationItem(TypedDict):
    """An entry with what it names, as it is now (``hydrate``)."""

    kind: str
    actor: User
    pin: Pin | None
    board: Board | None
    comment: Comment | None
    created_at: datetime
    unread: bool
    ago: NotRequired[str]  # how long ago, as the page says it


@dataclass(frozen=True)
class NotificationsPage:
    items: list[NotificationItem]
    cursor: str | None  # of the next page
    newest: int | None  # the sequence of the page's newest entry, shown or left out


def notifications_page(
    user_id: int, *, limit: int = 50, cursor: str | None = None, counts: bool = False
) -> NotificationsPage:
    """A page of the pinner's notifications, newest first (``counts``: the actors and
    pins with their counts, as the API shows them)."""
    page = get_notifications().page(user_id, limit=limit, cursor=cursor)
    items = hydrate(user_id, page.entries, page.read_up_to, counts=counts)
    newest = page.entries[0].sequence if page.entries else None
    return NotificationsPage(items, page.cursor, newest)


def hydrate(
    user_id: int, entries: list[Entry], read_up_to: int, *, counts: bool = False
) -> list[NotificationItem]:
    """Each entry as ``kind``, ``actor``, ``pin``, ``board``, ``comment`` (None where the
    kind names none), ``created_at`` and ``unread``; those the pinner cannot see left out."""
    comments = {c["id"]: c for c in get_comments(_objects(entries, COMMENT))}
    pin_ids = _objects(entries, *ON_PINS) + [c["pin_id"] for c in comments.values()]
    pins = {p["id"]: p for p in get_pins(list(dict.fromkeys(pin_ids)))}
    board_ids = [p["board_id"] for p in pins.values()] + _objects(entries, *ON_BOARDS)
    boards = {b["id"]: b for b in get_boards(list(dict.fromkeys(board_ids)))}
    actor_ids = list(dict.fromkeys(e.actor_id for e in entries))
    actors = {u["id"]: u for u in get_users(actor_ids, counts=counts)}
    items: list[NotificationItem] = []
    for entry in entries:
        comment: Comment | None = None
        pin: Pin | None = None
        board: Board | None = None
        if entry.kind == COMMENT:
            comment = comments.get(entry.object_id)
            pin = pins.get(comment["pin_id"]) if comment else None
        elif entry.kind in ON_PINS:
            pin = pins.get(entry.object_id)
        if pin is not None:
            board = boards.get(pin["board_id"])
        elif entry.kind in ON_BOARDS:
            board = boards.get(entry.object_id)
        actor = actors.get(entry.actor_id)
        if actor is None or not _visible(user_id, entry, pin, board):
            continue
        items.append(
            {
                "kind": entry.kind,
                "actor": actor,
                "pin": pin,
                "board": board if entry.kind in ON_BOARDS else None,
                "comment": comment,
                "created_at": datetime.fromtimestamp(entry.sequence / 1e6, UTC),
                "unread": entry.sequence > read_up_to,
            }
        )
    return items


def _objects(entries: list[Entry], *kinds: str) -> list[int]:
    return list(dict.fromkeys(e.object_id for e in entries if e.kind in kinds))


def _visible(user_id: int, entry: Entry, pin: Pin | None, board: Board | None) -> bool:
    if entry.kind == FOLLOW:
        return entry.object_id == user_id
    if board is None or not may_see(user_id, board):  # gone, or made secret since
        return False
    if entry.kind == INVITE:  # while it waits for an answer
        return user_id in board.get("invited", ())
    return entry.kind == BOARD_FOLLOW or (pin is not None and pin["board_id"] == board["id"])


def unread_count(user_id: int) -> int:
    """How many notifications the pinner has not read: one Redis call, no SQL."""
    return get_notifications().unread(user_id)


def unread_label(count: int) -> str:
    """The count as the header shows it: nothing for none, "99+" beyond 99."""
    if count <= 0:
        return ""
    return f"{MOST_SHOWN}+" if count > MOST_SHOWN else str(count)
