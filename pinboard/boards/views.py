"""Board pages: a board's pins (endless scroll), create, edit, delete, follow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from social.rules import is_invited, is_member

from .. import ratelimit
from ..entities import Board, pinner_stats
from ..errors import DomainError, NotFoundError
from ..follows.actions import follow_board, unfollow_board
from ..follows.queries import follows_board
from ..grid import pin_items
from ..ids import parse_id
from ..pins.queries import pinners_and_boards
from ..users.auth import get_pinner, signed_in_pinner
from ..users.queries import get_user, user_id_for
from ..views_common import (
    act,
    form_errors,
    next_url,
    parse_cursor,
    pinner_required,
)
from .actions import create_board, delete_board, update_board
from .board_page import board_by_slug, read_board_page
from .collaborators import (
    accept_invitation,
    collaborators_of,
    decline_invitation,
    invite,
    invitees_of,
    remove_collaborator,
)
from .privacy import owned_board, visible_board
from .queries import board_stats


def board_url(username: str, board: Board) -> str:
    return reverse("board", args=[username, board["slug"]])


def detail(request: HttpRequest, username: str, slug: str) -> HttpResponse:
    owner_id, board_id = board_by_slug(username, slug)
    pinner = get_pinner(request)
    viewer = pinner["id"] if pinner else None
    # A cursor is checked once the viewer may see the board: a 400 would say it exists.
    cursor = parse_cursor(request, lambda: visible_board(viewer, board_id))
    found = read_board_page(board_id, viewer, cursor=cursor, owner_id=owner_id)
    board, owner, pins = found.board, found.owner, found.pins
    assert owner is not None  # read_board_page reads it, with owner_id
    # Every pin of a board is its owner's: the cards name what the page has read already.
    pinners, boards = pinners_and_boards(pins, known_pinners=[owner], known_boards=[board])
    grid = {"pins": pin_items(pins, pinners, boards), "next_cursor": found.next_cursor}
    if request.GET.get("partial"):
        return render(request, "pins/_grid.html", grid)
    following = None
    if pinner is not None and pinner["id"] != owner["id"]:
        following = follows_board(pinner["id"], board)
    context = {
        **grid,
        "board": board,
        "owner": owner,
        **board_stats(board, pinner_stats(owner).followers),
        "following": following,
        "is_owner": pinner is not None and pinner["id"] == owner["id"],
        "is_member": is_member(pinner["id"] if pinner else None, board),
        "collaborators": collaborators_of(board),
        "invitees": invitees_of(board) if viewer == owner["id"] else [],
        "invited": is_invited(viewer, board),
    }
    return render(request, "boards/detail.html", context)


@pinner_required
def create(request: HttpRequest) -> HttpResponse:
    pinner = signed_in_pinner(request)
    errors: dict[str, str] = {}
    status = 200
    if request.method == "POST":
        post = request.POST
        try:
            secret = post.get("secret") == "on"
            board = create_board(
                pinner["id"], post.get("name"), post.get("description", ""), secret
            )
        except DomainError as error:
            errors, status = form_errors(error), error.status
        else:
            return redirect(board_url(pinner["username"], board))
    context = {"errors": errors, "values": request.POST, "board": None}
    return render(request, "boards/form.html", context, status=status)


@pinner_required
def edit(request: HttpRequest, board_id: str) -> HttpResponse:
    pinner = signed_in_pinner(request)
    board = owned_board(pinner["id"], parse_id(board_id, "board"))
    errors: dict[str, str] = {}
    status = 200
    values: Mapping[str, Any] = board
    if request.method == "POST":
        values = request.POST
        changes = {
            "name": values.get("name"),
            "description": values.get("description", ""),
            "secret": values.get("secret") == "on",
        }
        try:
            board = update_board(pinner["id"], board["id"], changes)
        except DomainError as error:
            errors, status = form_errors(error), error.status
        else:
            return redirect(board_url(pinner["username"], board))
    context = {"errors": errors, "values": values, "board": board}
    return render(request, "boards/form.html", context, status=status)


@require_POST
@pinner_required
def delete(request: HttpRequest, board_id: str) -> HttpResponse:
    pinner = signed_in_pinner(request)
    delete_board(pinner["id"], parse_id(board_id, "board"))
    return redirect("profile", pinner["username"])


@require_POST
@pinner_required
def follow(request: HttpRequest, board_id: str) -> HttpResponse:
    me, board = signed_in_pinner(request)["id"], parse_id(board_id, "board")
    return act(request, lambda: follow_board(me, board), "/")


@require_POST
@pinner_required
def unfollow(request: HttpRequest, board_id: str) -> HttpResponse:
    me, board = signed_in_pinner(request)["id"], parse_id(board_id, "board")
    return act(request, lambda: unfollow_board(me, board), "/")


@require_POST
@pinner_required
def add_member(request: HttpRequest, board_id: str) -> HttpResponse:
    """The owner invites a pinner, by username, to pin to the board."""
    me, board = signed_in_pinner(request)["id"], parse_id(board_id, "board")

    def add() -> None:
        user_id = user_id_for("username", str(request.POST.get("username", ""))[:100])
        if user_id is None:
            raise NotFoundError("no pinner has that username", field="username")
        ratelimit.check_pinner(me, "invite")
        invite(me, board, user_id)
        messages.success(request, "Invited: they join once they accept.")

    return act(request, add, "/")


@require_POST
@pinner_required
def answer_invitation(request: HttpRequest, board_id: str, answer: str) -> HttpResponse:
    """The invitee accepts (the board, where they may pin now) or declines."""
    me, board = signed_in_pinner(request)["id"], parse_id(board_id, "board")
    if answer not in ("accept", "decline"):
        raise Http404("no such answer")
    if answer == "accept":
        joined = accept_invitation(me, board)
        owner = get_user(joined["owner_id"], counts=False)
        return redirect(board_url(owner["username"], joined) if owner else "/")
    decline_invitation(me, board)
    return redirect(next_url(request, reverse("notifications")))


@require_POST
@pinner_required
def remove_member(request: HttpRequest, board_id: str, user_id: str) -> HttpResponse:
    """The owner removes a collaborator, or a collaborator leaves."""
    me, board = signed_in_pinner(request)["id"], parse_id(board_id, "board")
    member = parse_id(user_id, "user")
    return act(request, lambda: remove_collaborator(me, board, member), "/")
