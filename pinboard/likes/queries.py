"""Who liked a pin, and what a pinner liked."""

from __future__ import annotations

from shardstore import Page
from shardstore.cache import read_together

from ..boards.privacy import ShownPins, shown_pin, visible_pins
from ..boards.queries import reading_board
from ..data_plane import cached_store
from ..entities import Board, Pin, User
from ..errors import NotFoundError
from ..pins.queries import get_pins, reading_pin
from ..users.queries import reading_users

#: Reads of a page's size that a page of likes takes at most (``liked_pins``).
READS = 20


def read_likers(
    viewer_id: int | None, pin_id: int, *, limit: int = 50, cursor: str | None = None
) -> tuple[list[User], str | None]:
    """A page of the pinners who like the pin (with their counts), newest like first, if
    ``viewer_id`` may see the pin (NotFoundError otherwise), in two steps: the pin and a page
    of its likers' IDs together, then its board (which decides) and those pinners."""
    likers = cached_store().mapping("pin_liked_by_users")
    pin, page = read_together(
        reading_pin(pin_id), likers.reading_page(pin_id, limit=limit, cursor=cursor)
    )
    if pin is None:
        raise NotFoundError("no such pin")
    board, users = read_together(
        reading_board(pin["board_id"]), reading_users(page.ids, counts=True)
    )
    shown_pin(viewer_id, pin, board)
    return users, page.cursor


def likes_pin(actor_id: int, pin_id: int) -> bool:
    """Whether the pinner likes the pin (an edge check, cached)."""
    return cached_store().mapping("user_likes_pins").contains(actor_id, pin_id)


def liked_pins(
    viewer_id: int | None, user_id: int, *, limit: int = 50, cursor: str | None = None
) -> tuple[ShownPins, str | None]:
    """A page of the pins a pinner liked, the latest like first, that ``viewer_id`` may see
    (up to ``limit``), and the cursor of its last (None: no more). A like of a pin the
    viewer may not see (a secret board's) is read past, never ended on: a short page, or a
    cursor (the place of a like: its pin's ID and when it was liked), would tell of it.
    A page reads at most ``READS`` times ``limit`` likes: a longer run of likes the viewer
    may not see ends the list for them."""
    likes = cached_store().mapping("user_likes_pins")
    pins: list[Pin] = []
    boards: dict[int, Board] = {}
    last: tuple[str | None, Page, int] | None = None  # the last pin's read, and its place
    start = cursor
    for _ in range(READS):
        page = likes.page(user_id, limit=limit, cursor=start)
        shown = visible_pins(viewer_id, get_pins(page.ids))
        taken = shown.pins[: limit - len(pins)]
        if taken:
            pins += taken
            boards.update(shown.boards)
            last = (start, page, page.ids.index(taken[-1]["id"]))
        if len(pins) == limit or page.cursor is None:
            break
        start = page.cursor
    if last is None or (len(pins) < limit and page.cursor is None):
        return ShownPins(pins, boards), None
    start, page, at = last
    if at < len(page.ids) - 1:  # the page's own cursor is past it: read up to it again
        page = likes.page(user_id, limit=at + 1, cursor=start)
    return ShownPins(pins, boards), page.cursor
