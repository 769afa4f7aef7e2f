"""Boards: create, read, edit, delete, list a board's pins, follow and unfollow."""

from __future__ import annotations

from typing import Annotated, NotRequired, TypedDict

from django.http import HttpRequest, HttpResponse
from msgspec import Meta

from shardstore import shard_of

from ... import entities
from ...boards import actions
from ...boards.board_page import read_board_page
from ...boards.privacy import visible_board
from ...entities import pinner_stats
from ...errors import Forbidden, InvalidField, NotFoundError
from ...follows import actions as follow_actions
from ...ids import parse_id
from ...users.queries import get_user
from .. import serializers
from ..http import (
    PageQuery,
    created,
    endpoint,
    json_body,
    no_content,
    ok,
    page,
    page_params,
    require_pinner,
    viewer_id,
)
from ..idempotency import idempotent, key_of
from ..operations import operation
from ..schemas import Board, Id, PinList

BoardName = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=actions.MAX_NAME,
        pattern="[A-Za-z0-9]",
        description="At least one letter or digit (the board's URL slug is made from it).",
    ),
]
BoardDescription = Annotated[
    Annotated[str, Meta(max_length=actions.MAX_DESCRIPTION)] | None,
    Meta(description="Null means empty."),
]


BoardSecret = Annotated[
    bool, Meta(description="Seen by its owner only; to anyone else the board and its pins are 404.")
]


class NewBoard(TypedDict):
    name: BoardName
    description: NotRequired[BoardDescription]
    secret: NotRequired[BoardSecret]


class BoardEdit(TypedDict, total=False):
    name: BoardName
    description: BoardDescription
    secret: BoardSecret


def board_or_404(request: HttpRequest, raw_id: str) -> entities.Board:
    """The board, if it exists and the reader may see it (not another's secret board)."""
    return visible_board(viewer_id(request), parse_id(raw_id, "board"))


def board_json(board: entities.Board) -> Board:
    """The board with its follower count, which needs its owner's (seed 004)."""
    owner = get_user(board["owner_id"])
    owner_followers = pinner_stats(owner).followers if owner else 0
    return serializers.board(board, owner_followers)


def _create_target(request: HttpRequest) -> tuple[int, object]:
    """A board lives on its owner's shard."""
    return shard_of(require_pinner(request)["id"]), json_body(request, NewBoard)


def _board_made(request: HttpRequest, object_id: int) -> HttpResponse:
    """The answer of a create sent again, for the board an earlier attempt made."""
    return created(board_json(actions.resume_board(require_pinner(request)["id"], object_id)))


@operation("Create a board", ok=Board, status=201, errors=(InvalidField,), auth=True, body=NewBoard)
@idempotent(_create_target, _board_made)
def _create(request: HttpRequest) -> HttpResponse:
    pinner = require_pinner(request)
    data = json_body(request, NewBoard)
    board = actions.create_board(
        pinner["id"],
        data["name"],
        data.get("description", ""),
        data.get("secret", False),
        key=key_of(request),
    )
    return created(board_json(board))


@operation("A board", ok=Board, errors=(NotFoundError,))
def _get(request: HttpRequest, board_id: Id) -> HttpResponse:
    return ok(board_json(board_or_404(request, board_id)))


@operation(
    "Edit your board",
    ok=Board,
    errors=(Forbidden, NotFoundError, InvalidField),
    auth=True,
    body=BoardEdit,
)
def _update(request: HttpRequest, board_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    board_id_ = parse_id(board_id, "board")
    data = json_body(request, BoardEdit)
    return ok(board_json(actions.update_board(pinner["id"], board_id_, dict(data))))


@operation("Delete your board and its pins", errors=(Forbidden, NotFoundError), auth=True)
def _delete(request: HttpRequest, board_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    actions.delete_board(pinner["id"], parse_id(board_id, "board"))
    return no_content()


@operation("A board's pins, newest first", ok=PinList, errors=(NotFoundError,), query=PageQuery)
def _pins(request: HttpRequest, board_id: Id) -> HttpResponse:
    wanted = parse_id(board_id, "board")
    limit, cursor = page_params(request)
    found = read_board_page(wanted, viewer_id(request), cursor=cursor, limit=limit)
    return page([serializers.pin(p) for p in found.pins], found.next_cursor)


@operation("Follow the board", errors=(Forbidden, NotFoundError, InvalidField), auth=True)
def _follow(request: HttpRequest, board_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    follow_actions.follow_board(pinner["id"], parse_id(board_id, "board"))
    return no_content()


@operation(
    "Unfollow the board (recorded as a board unfollow if you follow its owner)",
    errors=(NotFoundError,),
    auth=True,
)
def _unfollow(request: HttpRequest, board_id: Id) -> HttpResponse:
    """Also for a board followed through its owner: records a board unfollow (seed 004)."""
    pinner = require_pinner(request)
    board = board_or_404(request, board_id)
    follow_actions.unfollow_board(pinner["id"], board["id"])
    return no_content()


boards = endpoint(POST=_create)
board = endpoint(GET=_get, PATCH=_update, DELETE=_delete)
pins = endpoint(GET=_pins)
follow = endpoint(PUT=_follow, DELETE=_unfollow)
