"""The search page: ``/search/?q=...&type=pins|boards|pinners``, one tab of results at a
time, with endless scroll (``?cursor=...&partial=1`` answers the next chunk alone, as the
board pages do). A query there is nothing to search for gets a word of help, not an
error; a malformed cursor or an unknown type is a 400 page."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from shardstore.cache import read_together

from ..boards.queries import cover_pins, reading_covers
from ..entities import Board
from ..errors import BadRequest
from ..grid import BoardCard, board_cards, pin_items
from ..pins.queries import pinners_and_boards
from ..users.auth import get_pinner
from ..views_common import parse_cursor
from .queries import (
    KINDS,
    Position,
    found_boards,
    found_pinners,
    found_pins,
    position,
    reading_owners_of,
)
from .words import Query, QueryError, parse_query

#: The tabs, in order, and what each calls its results.
TABS = {"pins": "Pins", "boards": "Boards", "pinners": "Pinners"}
#: Each tab's chunk of results (what ``partial=1`` answers) and the element it is.
CHUNKS = {
    "pins": ("pins/_grid.html", ".grid"),
    "boards": ("search/_boards.html", ".boards"),
    "pinners": ("search/_pinners.html", ".people"),
}


def board_results(boards: list[Board]) -> list[BoardCard]:
    """Found boards as the cards a page shows (cover, counts, owner's username), in two
    steps: the owners and the boards' first pages of pins together, then the covers."""
    owners, covers = read_together(
        reading_owners_of(boards), reading_covers([board["id"] for board in boards])
    )
    return board_cards(boards, owners, covers, cover_pins(covers))


def results(tab: str, viewer_id: int | None, query: Query, at: Position) -> dict[str, Any]:
    """One page of a tab's results, as its chunk template names them."""
    if tab == "pins":
        shown, cursor = found_pins(viewer_id, query, at)
        pinners, pin_boards = pinners_and_boards(shown.pins, known_boards=shown.boards.values())
        items = pin_items(shown.pins, pinners, pin_boards)
        return {"pins": items, "found": len(items), "next_cursor": cursor}
    if tab == "boards":
        boards, cursor = found_boards(viewer_id, query, at)
        cards = board_results(boards)
        return {"boards": cards, "found": len(cards), "next_cursor": cursor}
    people, cursor = found_pinners(viewer_id, query, at)
    return {"people": people, "found": len(people), "next_cursor": cursor}


@require_safe
def search(request: HttpRequest) -> HttpResponse:
    at = position(parse_cursor(request))  # a malformed cursor is a 400 before anything else
    tab = request.GET.get("type") or "pins"
    if tab not in KINDS:
        raise BadRequest(f"type is one of {', '.join(TABS)}")
    text = request.GET.get("q", "")
    template, chunk = CHUNKS[tab]
    context: dict[str, Any] = {
        "search_query": text,
        "search_tab": tab,
        "chunk_template": template,
        "chunk": chunk,
        "next_cursor": None,
        "tabs": [
            {"name": name, "label": label, "url": "?" + urlencode({"q": text, "type": name})}
            for name, label in TABS.items()
        ],
        "tab_label": TABS[tab].lower(),
    }
    try:
        query = parse_query(text)
    except QueryError as error:
        context["problem"] = error.message if text else None
    else:
        pinner = get_pinner(request)
        # An index that cannot answer is a 503 (http_errors).
        context.update(results(tab, pinner["id"] if pinner else None, query, at))
        context["searched"] = True
    if context["next_cursor"]:
        more = {"q": text, "type": tab, "cursor": context["next_cursor"]}
        context["more_url"] = "?" + urlencode(more)
    if request.GET.get("partial"):
        return render(request, template, context)
    return render(request, "search/results.html", context)
