"""What the index holds of a pin, a board and a pinner: made from the object as stored, the
same way by the tasks that keep the index current and by the rebuild (so a rebuild of a
current index changes nothing)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from social.rules import is_secret

from ..entities import Board, Pin, User
from .index import Document
from .words import search_text

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def created(data: Pin | Board | User) -> int:
    """When the object was made, in microseconds since the epoch (0 if it does not say)."""
    stamp = data.get("created_at")
    if not isinstance(stamp, str):
        return 0
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - EPOCH) // timedelta(microseconds=1)


def pin_document(pin: Pin, board: Board) -> Document:
    """A pin, found by its description and its board's name; secret with its board."""
    return Document(
        kind="pin",
        id=pin["id"],
        name=search_text(pin.get("description", "")),
        body=search_text(board.get("name", "")),
        owner_id=pin["owner_id"],
        board_id=board["id"],
        secret=is_secret(board),
        created=created(pin),
    )


def board_document(board: Board) -> Document:
    """A board, found by its name and description."""
    return Document(
        kind="board",
        id=board["id"],
        name=search_text(board.get("name", "")),
        body=search_text(board.get("description", "")),
        owner_id=board["owner_id"],
        board_id=None,
        secret=is_secret(board),
        created=created(board),
    )


def user_document(user: User) -> Document:
    """A pinner, found by their username and display name, and their about text."""
    return Document(
        kind="user",
        id=user["id"],
        name=search_text(user.get("username", ""), user.get("display_name", "")),
        body=search_text(user.get("about", "")),
        owner_id=user["id"],
        board_id=None,
        secret=False,
        created=created(user),
    )
