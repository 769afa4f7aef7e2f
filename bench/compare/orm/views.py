"""The API endpoints pinboard's clients use most, with pinboard's paths, bodies and JSON.

Each read is one query, whatever the page size: the object (its counts are columns), or
its page, with the pinners it names joined in; only an empty page asks whether its object
exists at all. The feed reads the token's pinner, the boards they follow, then the page.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse

from . import actions, serializers
from .api import (
    endpoint,
    invalid,
    json_body,
    json_response,
    not_found,
    page,
    page_params,
    parse_id,
    require_pinner,
    text_field,
)
from .models import Board, Comment, Like, Pin, Pinner
from .paging import keyset_page
from .queries import feed_board_ids

M = TypeVar("M", bound=Model)

MAX_COMMENT = 500
MAX_DESCRIPTION = 500


def get_or_404(rows: QuerySet[M], raw_id: str, what: str) -> M:
    try:
        return rows.get(pk=parse_id(raw_id, what))
    except ObjectDoesNotExist:
        raise not_found(f"no such {what}") from None


def page_or_404(
    rows: QuerySet[M], owner: type[Model], owner_id: int, what: str, request: HttpRequest,
    *, newest_first: bool = True,
) -> tuple[list[M], str | None]:  # fmt: skip
    """A page of ``rows`` (those of ``owner_id``); 404 if it is empty because there is no
    such ``owner``, which is read only then."""
    limit, cursor = page_params(request)
    found, next_cursor = keyset_page(rows, limit=limit, cursor=cursor, newest_first=newest_first)
    if not found and not owner.objects.filter(pk=owner_id).exists():
        raise not_found(f"no such {what}")
    return found, next_cursor


def body_id(data: dict[str, Any], name: str, what: str) -> int:
    """A body field holding an ID: a decimal string, as IDs travel in JSON."""
    value = data[name]
    if not isinstance(value, str):
        raise invalid(f"{name} must be an ID as a decimal string", field=name)
    return parse_id(value, what)


# -- pinners ------------------------------------------------------------------------


def _user(request: HttpRequest, user_id: str) -> HttpResponse:
    return json_response(serializers.pinner(get_or_404(Pinner.objects.all(), user_id, "user")))


def _user_boards(request: HttpRequest, user_id: str) -> HttpResponse:
    owner_id = parse_id(user_id, "user")
    boards = Board.objects.filter(owner_id=owner_id, secret=False)
    found, next_cursor = page_or_404(boards, Pinner, owner_id, "user", request)
    return page([serializers.board(b) for b in found], next_cursor)


def _follow(request: HttpRequest, user_id: str) -> HttpResponse:
    actions.follow(require_pinner(request), parse_id(user_id, "user"))
    return HttpResponse(status=204)


# -- boards ---------------------------------------------------------------------------


def _board(request: HttpRequest, board_id: str) -> HttpResponse:
    return json_response(serializers.board(get_or_404(Board.objects.all(), board_id, "board")))


def _board_pins(request: HttpRequest, board_id: str) -> HttpResponse:
    board = parse_id(board_id, "board")
    found, next_cursor = page_or_404(
        Pin.objects.filter(board_id=board), Board, board, "board", request
    )
    return page([serializers.pin(p) for p in found], next_cursor)


# -- pins -----------------------------------------------------------------------------


def _pin(request: HttpRequest, pin_id: str) -> HttpResponse:
    return json_response(serializers.pin(get_or_404(Pin.objects.all(), pin_id, "pin")))


def _like(request: HttpRequest, pin_id: str) -> HttpResponse:
    actions.like(require_pinner(request), parse_id(pin_id, "pin"))
    return HttpResponse(status=204)


def _save(request: HttpRequest, pin_id: str) -> HttpResponse:
    actor = require_pinner(request)
    source = parse_id(pin_id, "pin")
    data = json_body(request, required=("board_id",), optional=("description",))
    board = body_id(data, "board_id", "board")
    description = None
    if data.get("description") is not None:
        description = text_field(data, "description", most=MAX_DESCRIPTION)
    saved = actions.save(actor, source, board, description)  # new: its counts are 0
    return json_response(serializers.pin(saved), status=201)


def _likes(request: HttpRequest, pin_id: str) -> HttpResponse:
    pin = parse_id(pin_id, "pin")
    likes = Like.objects.filter(pin_id=pin).select_related("user")
    found, next_cursor = page_or_404(likes, Pin, pin, "pin", request)
    return page([serializers.pinner(like.user) for like in found], next_cursor)


def _comments(request: HttpRequest, pin_id: str) -> HttpResponse:
    pin = parse_id(pin_id, "pin")
    comments = Comment.objects.filter(pin_id=pin).select_related("author")
    found, next_cursor = page_or_404(comments, Pin, pin, "pin", request, newest_first=False)
    return page([serializers.comment(c) for c in found], next_cursor)


def _comment(request: HttpRequest, pin_id: str) -> HttpResponse:
    actor = require_pinner(request)
    pin = parse_id(pin_id, "pin")
    text = text_field(json_body(request, required=("text",)), "text", least=1, most=MAX_COMMENT)
    made = actions.comment(actor, pin, text)
    return json_response(serializers.comment(made), status=201)


# -- the home feed ----------------------------------------------------------------------


def _feed(request: HttpRequest) -> HttpResponse:
    """A pull feed: the boards the viewer follows (one query), then the newest pins of them
    all (one more), read from each board's (board, created_at) index and merged by MariaDB."""
    viewer = require_pinner(request)
    limit, cursor = page_params(request)
    pins = Pin.objects.filter(board_id__in=feed_board_ids(viewer))
    found, next_cursor = keyset_page(pins, limit=limit, cursor=cursor)
    return page([serializers.pin(p) for p in found], next_cursor)


user = endpoint(GET=_user)
user_boards = endpoint(GET=_user_boards)
user_follow = endpoint(PUT=_follow)
board = endpoint(GET=_board)
board_pins = endpoint(GET=_board_pins)
pin = endpoint(GET=_pin)
pin_like = endpoint(PUT=_like)
pin_save = endpoint(POST=_save)
pin_likes = endpoint(GET=_likes)
pin_comments = endpoint(GET=_comments, POST=_comment)
feed = endpoint(GET=_feed)
