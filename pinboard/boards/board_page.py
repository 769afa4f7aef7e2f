"""What a board's page reads, for the page (``views.detail``) and the API's list of its pins
alike, in two steps: the board, its owner (for the page, which names them) and a page of
its pins' IDs together, then the pins. Who may see the board is checked once the board is
read (``privacy.shown_board``): anyone else gets the NotFoundError a missing board gets."""

from __future__ import annotations

from dataclasses import dataclass

from shardstore.cache import Read, read_together

from ..entities import Board, Pin, User
from ..errors import NotFoundError
from ..pins.queries import get_pins, reading_board_pins
from ..users.queries import reading_user, user_id_for
from .privacy import shown_board
from .queries import board_id_by_slug, reading_board


@dataclass(frozen=True)
class BoardPage:
    board: Board
    owner: User | None  # read when the reader is told who owns the board
    pins: list[Pin]  # a page of them, newest first
    next_cursor: str | None


def board_by_slug(username: str, slug: str) -> tuple[int, int]:
    """The owner's and the board's IDs of ``/<username>/<slug>/``; NotFoundError if none."""
    owner_id = user_id_for("username", username)
    board_id = owner_id and board_id_by_slug(owner_id, slug)
    if not owner_id or not board_id:
        raise NotFoundError("no such board")
    return owner_id, board_id


def read_board_page(
    board_id: int,
    viewer_id: int | None,
    *,
    cursor: str | None,
    limit: int = 50,
    owner_id: int | None = None,
) -> BoardPage:
    """A page of the board's pins as ``viewer_id`` sees it. ``owner_id``: the board's owner,
    known from its slug, read with the board (and missing, the board is)."""
    board, owner, page = read_together(
        reading_board(board_id),
        reading_user(owner_id) if owner_id is not None else Read.done(None),
        reading_board_pins(board_id, limit=limit, cursor=cursor),
    )
    board = shown_board(viewer_id, board)
    if owner_id is not None and owner is None:  # an account being deleted
        raise NotFoundError("no such board")
    return BoardPage(board, owner, get_pins(page.ids), page.cursor)
