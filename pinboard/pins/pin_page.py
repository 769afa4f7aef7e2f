"""What a pin's page reads, for the page (``views.detail``) and the API's list of its
comments alike, in two steps: the pin and a page of its comments' IDs together, then its
board, its pinner (for the page, which names them) and the comments. Who may see the pin is
checked once its board is read (``boards.privacy.shown_pin``): anyone else gets the
NotFoundError a missing pin gets."""

from __future__ import annotations

from dataclasses import dataclass

from shardstore.cache import Read, read_together

from ..boards.privacy import shown_pin
from ..boards.queries import reading_board
from ..entities import Board, Comment, Pin, User
from ..errors import NotFoundError
from ..users.queries import reading_user
from .queries import reading_comments, reading_comments_of, reading_pin


@dataclass(frozen=True)
class PinPage:
    pin: Pin
    board: Board
    owner: User | None  # the pin's pinner, without counts, when asked for
    comments: list[Comment]  # a page of them, oldest first, each with its author
    comments_cursor: str | None


def read_pin_page(
    pin_id: int,
    viewer_id: int | None,
    *,
    cursor: str | None,
    limit: int = 50,
    with_owner: bool = True,
) -> PinPage:
    """The pin and a page of its comments as ``viewer_id`` sees them (``with_owner``: its
    pinner too, read with its board; missing, the pin is)."""
    pin, page = read_together(
        reading_pin(pin_id), reading_comments(pin_id, limit=limit, cursor=cursor)
    )
    if pin is None:
        raise NotFoundError("no such pin")
    board, owner, comments = read_together(
        reading_board(pin["board_id"]),
        reading_user(pin["owner_id"], counts=False) if with_owner else Read.done(None),
        reading_comments_of(page),
    )
    pin, board = shown_pin(viewer_id, pin, board)
    if with_owner and owner is None:  # an account being deleted
        raise NotFoundError("no such pin")
    return PinPage(pin, board, owner, comments, page.cursor)
