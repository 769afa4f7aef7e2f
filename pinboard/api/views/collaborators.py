"""Group boards: a board's collaborators, whom its owner adds and removes, and the group
boards a pinner is in."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from ...boards import collaborators as group
from ...errors import Forbidden, InvalidField, NotFoundError
from ...ids import parse_id
from ...users.queries import get_users
from .. import serializers
from ..http import endpoint, no_content, ok, page, require_pinner, viewer_id
from ..operations import operation
from ..schemas import BoardList, Id, UserList
from .boards import board_json, board_or_404
from .users import user_or_404


@operation(
    "The board's collaborators, in the order they joined", ok=UserList, errors=(NotFoundError,)
)
def _list(request: HttpRequest, board_id: Id) -> HttpResponse:
    board = board_or_404(request, board_id)
    people = get_users(list(board.get("collaborators", ())), counts=True)
    return ok({"items": [serializers.user(u) for u in people], "next": None})


@operation(
    "Add a collaborator to your board: they pin to it, and see it though it be secret",
    errors=(NotFoundError, Forbidden, InvalidField),
    auth=True,
)
def _add(request: HttpRequest, board_id: Id, user_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    board, member = parse_id(board_id, "board"), parse_id(user_id, "user")
    group.add_collaborator(pinner["id"], board, member)
    return no_content()


@operation(
    "Remove a collaborator from your board, or leave a board you collaborate on",
    errors=(NotFoundError, Forbidden),
    auth=True,
)
def _remove(request: HttpRequest, board_id: Id, user_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    board, member = parse_id(board_id, "board"), parse_id(user_id, "user")
    group.remove_collaborator(pinner["id"], board, member)
    return no_content()


@operation("The group boards a pinner collaborates on", ok=BoardList, errors=(NotFoundError,))
def _group_boards(request: HttpRequest, user_id: Id) -> HttpResponse:
    user = user_or_404(user_id, counts=False)
    boards = group.group_boards(user["id"], viewer_id(request))
    return page([board_json(b) for b in boards], None)


collaborators = endpoint(GET=_list)
collaborator = endpoint(PUT=_add, DELETE=_remove)
group_boards = endpoint(GET=_group_boards)
