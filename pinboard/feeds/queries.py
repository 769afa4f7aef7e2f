"""Reading a home feed and the site's newest pins: pin IDs from Redis (a feed's with the
boards their entries name), pins through the cache pool, less those of a secret board
(``boards.privacy``: its task may not have run). Reads only: the visit a first page notes
is ``actions.note_visit`` (``home.read_home``)."""

from __future__ import annotations

from shardstore.cache import read_together

from ..boards.privacy import ShownPins, visible_pins
from ..boards.queries import reading_boards
from ..data_plane import get_feeds
from ..pins.queries import get_pins, reading_pins


def home_feed(
    user_id: int, *, limit: int = 50, cursor: str | None = None
) -> tuple[ShownPins, str | None]:
    """A page of the pinner's home feed, newest first; deleted pins are skipped. The pins
    and the boards their entries name are one read step."""
    page = get_feeds().page(user_id, limit=limit, cursor=cursor)
    named = sorted(set(page.boards.values()))
    pins, boards = read_together(reading_pins(page.ids), reading_boards(named, counts=False))
    return visible_pins(user_id, pins, boards), page.cursor


def recent_pins(*, limit: int = 50, cursor: str | None = None) -> tuple[ShownPins, str | None]:
    """A page of the site's newest pins (what a visitor without an account sees)."""
    page = get_feeds().recent_page(limit=limit, cursor=cursor)
    return visible_pins(None, get_pins(page.ids)), page.cursor
