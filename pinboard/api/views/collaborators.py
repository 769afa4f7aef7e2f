"""Group boards: a board's collaborators, whom its owner invites and removes, the invitee's
answer, and the group boards a pinner is in."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from ... import ratelimit
from ...boards import collaborators as group
from ...errors import Forbidden, InvalidField, NotFoundError, RateLimited
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
    "Invite a pinner to collaborate on your board: once they accept, they pin to it, and see"
    " it though it be secret",
    errors=(NotFoundError, Forbidden, InvalidField, RateLimited),
    auth=True,
)
def _add(request: HttpRequest, board_id: Id, user_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    board, member = parse_id(board_id, "board"), parse_id(user_id, "user")
    ratelimit.check_pinner(pinner["id"], "invite")
    group.invite(pinner["id"], board, member)
    return no_content()


@operation(
    "Accept an invitation to collaborate on the board: it joins your group boards",
    errors=(NotFoundError,),
    auth=True,
)
def _accept(request: HttpRequest, board_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    group.accept_invitation(pinner["id"], parse_id(board_id, "board"))
    return no_content()


@operation("Decline an invitation to collaborate on the board", errors=(NotFoundError,), auth=True)
def _decline(request: HttpRequest, board_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    group.decline_invitation(pinner["id"], parse_id(board_id, "board"))
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
invitation = endpoint(POST=_accept, DELETE=_decline)
group_boards = endpoint(GET=_group_boards)
