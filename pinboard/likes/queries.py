"""Who liked a pin, and what a pinner liked."""

from __future__ import annotations

from shardstore import Page

from ..boards.privacy import ShownPins, visible_pins
from ..data_plane import cached_store
from ..pins.queries import get_pins


def likers_page(pin_id: int, *, limit: int = 50, cursor: str | None = None) -> Page:
    return cached_store().mapping("pin_liked_by_users").page(pin_id, limit=limit, cursor=cursor)


def likes_pin(actor_id: int, pin_id: int) -> bool:
    """Whether the pinner likes the pin (an edge check, cached)."""
    return cached_store().mapping("user_likes_pins").contains(actor_id, pin_id)


def liked_pins(
    viewer_id: int | None, user_id: int, *, limit: int = 50, cursor: str | None = None
) -> tuple[ShownPins, str | None]:
    """The pins a pinner liked, the latest like first, that ``viewer_id`` may see."""
    page = cached_store().mapping("user_likes_pins").page(user_id, limit=limit, cursor=cursor)
    return visible_pins(viewer_id, get_pins(page.ids)), page.cursor
