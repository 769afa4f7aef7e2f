"""The API endpoints pinboard's clients use most, with pinboard's paths, bodies and JSON.

Each read is a constant number of queries, whatever the page size: the object with its
counts (one query), then its page (one more), and for pages of comments or likers one
more for their authors with counts (a Prefetch). The feed reads the token's pinner, the
boards they follow, then the page.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Model, Prefetch, QuerySet
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
from .queries import boards_with_counts, feed_board_ids, pinners_with_counts, pins_with_counts

M = TypeVar("M", bound=Model)

MAX_COMMENT = 500
MAX_DESCRIPTION = 500


def get_or_404(rows: QuerySet[M], raw_id: str, what: str) -> M:
    try:
        return rows.get(pk=parse_id(raw_id, what))
    except ObjectDoesNotExist:
        raise not_found(f"no such {what}") from None


def exists_or_404(model: type[Model], raw_id: str, what: str) -> int:
    object_id = parse_id(raw_id, what)
    if not model.objects.filter(pk=object_id).exists():
        raise not_found(f"no such {what}")
    return object_id


def body_id(data: dict[str, Any], name: str, what: str) -> int:
    """A body field holding an ID: a decimal string, as IDs travel in JSON."""
    value = data[name]
    if not isinstance(value, str):
        raise invalid(f"{name} must be an ID as a decimal string", field=name)
    return parse_id(value, what)


def with_authors(rows: QuerySet[M], relation: str) -> QuerySet[M]:
    """``rows`` with the pinner each names through ``relation``, counts included: one query
    for the whole page."""
    return rows.prefetch_related(Prefetch(relation, queryset=pinners_with_counts()))


# -- pinners ------------------------------------------------------------------------


def _user(request: HttpRequest, user_id: str) -> HttpResponse:
    return json_response(serializers.pinner(get_or_404(pinners_with_counts(), user_id, "user")))


def _user_boards(request: HttpRequest, user_id: str) -> HttpResponse:
    owner_id = exists_or_404(Pinner, user_id, "user")
    limit, cursor = page_params(request)
    boards = boards_with_counts().filter(owner_id=owner_id, secret=False)
    found, next_cursor = keyset_page(boards, limit=limit, cursor=cursor)
    return page([serializers.board(b) for b in found], next_cursor)


def _follow(request: HttpRequest, user_id: str) -> HttpResponse:
    actions.follow(require_pinner(request), parse_id(user_id, "user"))
    return HttpResponse(status=204)


# -- boards ---------------------------------------------------------------------------


def _board(request: HttpRequest, board_id: str) -> HttpResponse:
    return json_response(serializers.board(get_or_404(boards_with_counts(), board_id, "board")))


def _board_pins(request: HttpRequest, board_id: str) -> HttpResponse:
    board = exists_or_404(Board, board_id, "board")
    limit, cursor = page_params(request)
    pins = pins_with_counts().filter(board_id=board)
    found, next_cursor = keyset_page(pins, limit=limit, cursor=cursor)
    return page([serializers.pin(p) for p in found], next_cursor)


# -- pins -----------------------------------------------------------------------------


def _pin(request: HttpRequest, pin_id: str) -> HttpResponse:
    return json_response(serializers.pin(get_or_404(pins_with_counts(), pin_id, "pin")))


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
    saved = actions.save(actor, source, board, description)
    return json_response(serializers.pin(pins_with_counts().get(pk=saved.pk)), status=201)


def _likes(request: HttpRequest, pin_id: str) -> HttpResponse:
    pin = exists_or_404(Pin, pin_id, "pin")
    limit, cursor = page_params(request)
    likes = with_authors(Like.objects.filter(pin_id=pin), "user")
    found, next_cursor = keyset_page(likes, limit=limit, cursor=cursor)
    return page([serializers.pinner(like.user) for like in found], next_cursor)


def _comments(request: HttpRequest, pin_id: str) -> HttpResponse:
    pin = exists_or_404(Pin, pin_id, "pin")
    limit, cursor = page_params(request)
    comments = with_authors(Comment.objects.filter(pin_id=pin), "author")
    found, next_cursor = keyset_page(comments, limit=limit, cursor=cursor, newest_first=False)
    return page([serializers.comment(c) for c in found], next_cursor)


def _comment(request: HttpRequest, pin_id: str) -> HttpResponse:
    actor = require_pinner(request)
    pin = parse_id(pin_id, "pin")
    text = text_field(json_body(request, required=("text",)), "text", least=1, most=MAX_COMMENT)
    made = actions.comment(actor, pin, text)
    made.author = pinners_with_counts().get(pk=actor.pk)
    return json_response(serializers.comment(made), status=201)


# -- the home feed ----------------------------------------------------------------------


def _feed(request: HttpRequest) -> HttpResponse:
    """A pull feed: the boards the viewer follows (one query), then the newest pins of them
    all (one more), read from each board's (board, created_at) index and merged by MariaDB."""
    viewer = require_pinner(request)
    limit, cursor = page_params(request)
    pins = pins_with_counts().filter(board_id__in=feed_board_ids(viewer))
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
