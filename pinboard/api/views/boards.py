"""Boards: create, read, edit, delete, list a board's pins, follow and unfollow."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse

from ...boards import actions
from ...boards.queries import get_board
from ...errors import NotFoundError
from ...follows import actions as follow_actions
from ...ids import parse_id
from ...pins.queries import board_pins_page, get_pins
from ...users.queries import get_user
from .. import serializers
from ..http import created, endpoint, json_body, no_content, ok, page, page_params, require_pinner


def board_or_404(raw_id: str) -> dict[str, Any]:
    board = get_board(parse_id(raw_id, "board"))
    if board is None:
        raise NotFoundError("no such board")
    return board


def board_json(board: dict[str, Any]) -> dict[str, Any]:
    """The board with its follower count, which needs its owner's (seed 004)."""
    owner = get_user(board["owner_id"])
    owner_followers = owner["counts"]["user_followed_by_users"] if owner else 0
    return serializers.board(board, owner_followers)


def _create(request: HttpRequest) -> HttpResponse:
    pinner = require_pinner(request)
    data = json_body(request, required=("name",), optional=("description",))
    board = actions.create_board(pinner["id"], data["name"], data.get("description", ""))
    return created(board_json(board))


def _get(request: HttpRequest, board_id: str) -> HttpResponse:
    return ok(board_json(board_or_404(board_id)))


def _update(request: HttpRequest, board_id: str) -> HttpResponse:
    pinner = require_pinner(request)
    board_id_ = parse_id(board_id, "board")
    data = json_body(request, optional=("name", "description"))
    return ok(board_json(actions.update_board(pinner["id"], board_id_, data)))


def _delete(request: HttpRequest, board_id: str) -> HttpResponse:
    pinner = require_pinner(request)
    actions.delete_board(pinner["id"], parse_id(board_id, "board"))
    return no_content()


def _pins(request: HttpRequest, board_id: str) -> HttpResponse:
    board = board_or_404(board_id)
    limit, cursor = page_params(request)
    ids, next_cursor = board_pins_page(board["id"], limit=limit, cursor=cursor)
    return page([serializers.pin(p) for p in get_pins(ids)], next_cursor)


def _follow(request: HttpRequest, board_id: str) -> HttpResponse:
    pinner = require_pinner(request)
    follow_actions.follow_board(pinner["id"], parse_id(board_id, "board"))
    return no_content()


def _unfollow(request: HttpRequest, board_id: str) -> HttpResponse:
    """Also for a board followed through its owner: records a board unfollow (seed 004)."""
    pinner = require_pinner(request)
    follow_actions.unfollow_board(pinner["id"], parse_id(board_id, "board"))
    return no_content()


boards = endpoint(POST=_create)
board = endpoint(GET=_get, PATCH=_update, DELETE=_delete)
pins = endpoint(GET=_pins)
follow = endpoint(PUT=_follow, DELETE=_unfollow)
