"""What the home page reads, for the page and the API's feed alike: a pinner's home feed
(its first page notes the visit first, ``actions.note_visit``), or for a visitor the site's
newest pins; either less the pins of boards the viewer may not see (``queries``)."""

from __future__ import annotations

from ..boards.privacy import ShownPins
from .actions import note_visit
from .queries import home_feed, recent_pins


def read_home(
    viewer_id: int | None, *, limit: int = 50, cursor: str | None = None
) -> tuple[ShownPins, str | None]:
    """A page of the viewer's home, newest first, and the next page's cursor."""
    if viewer_id is None:
        return recent_pins(limit=limit, cursor=cursor)
    if cursor is None:
        note_visit(viewer_id)
    return home_feed(viewer_id, limit=limit, cursor=cursor)
