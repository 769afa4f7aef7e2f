"""Who liked a pin, and what a pinner liked."""

from __future__ import annotations

from shardstore.cache import read_together

from ..boards.privacy import ShownPins, shown_pin, visible_pins
from ..boards.queries import reading_board
from ..data_plane import cached_store
from ..entities import User
from ..errors import NotFoundError
from ..pins.queries import get_pins, reading_pin
from ..users.queries import reading_users


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
    """The pins a pinner liked, the latest like first, that ``viewer_id`` may see."""
    page = cached_store().mapping("user_likes_pins").page(user_id, limit=limit, cursor=cursor)
    return visible_pins(viewer_id, get_pins(page.ids)), page.cursor
