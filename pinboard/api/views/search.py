"""Search: pins, boards or pinners by their words, a page at a time."""

from __future__ import annotations

from typing import Annotated, Literal, Required

from django.http import HttpRequest, HttpResponse
from msgspec import Meta

from ...entities import pinner_stats
from ...errors import BadRequest
from ...search.queries import (
    KINDS,
    found_boards,
    found_pinners,
    found_pins,
    owners_of,
    position,
)
from ...search.words import MAX_QUERY, QueryError, parse_query
from .. import serializers
from ..http import PageQuery, endpoint, page, page_params, viewer_id
from ..operations import operation
from ..schemas import SearchResults


class SearchQuery(PageQuery, total=False):
    q: Required[
        Annotated[
            str,
            Meta(
                min_length=1,
                max_length=MAX_QUERY,
                description=f"What to look for, at most {MAX_QUERY} characters: its words"
                " (letters and digits; case and accents do not matter) must all match, the"
                " last one, of 3 characters or more, also as the start of a word unless a"
                " space ends the query. Without a word in it, a 400.",
            ),
        ]
    ]
    type: Annotated[
        Literal["pins", "boards", "pinners"],
        Meta(
            description="What to find (default `pins`): pins by their description and"
            " their board's name, boards by their name and description, pinners by their"
            " username, display name and about text. Items are Pins, Boards or Users."
        ),
    ]


@operation(
    "Search pins, boards or pinners: the most relevant first, then the newest; secret boards"
    " and their pins only for their owner",
    ok=SearchResults,
    query=SearchQuery,
)
def _search(request: HttpRequest) -> HttpResponse:
    limit, cursor = page_params(request)
    at = position(cursor)  # a malformed cursor is a 400 before the query is looked at
    kind = request.GET.get("type") or "pins"
    if kind not in KINDS:
        raise BadRequest(f"type is one of {', '.join(KINDS)}", field="type")
    try:
        query = parse_query(request.GET.get("q"))
    except QueryError as error:
        raise BadRequest(error.message, field="q") from None
    viewer = viewer_id(request)
    # An index that cannot answer is a 503 with Retry-After (http_errors).
    if kind == "pins":
        shown, next_cursor = found_pins(viewer, query, at, limit=limit)
        return page([serializers.pin(p) for p in shown.pins], next_cursor)
    if kind == "boards":
        boards, next_cursor = found_boards(viewer, query, at, limit=limit)
        owners = owners_of(boards)
        items = [
            serializers.board(b, pinner_stats(owners[b["owner_id"]]).followers)
            for b in boards
            if b["owner_id"] in owners
        ]
        return page(items, next_cursor)
    people, next_cursor = found_pinners(viewer, query, at, limit=limit, counts=True)
    return page([serializers.user(u) for u in people], next_cursor)


search = endpoint(GET=_search)
