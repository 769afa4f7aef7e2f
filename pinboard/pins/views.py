"""Pin pages: a pin with its comments, create (from a file or a URL), edit, delete, save to a
board, comment and delete a comment."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from social.rules import is_member, may_act_on, may_copy_to, shown_saved_from

from .. import ratelimit
from ..boards.privacy import editable_pin, visible_pin
from ..boards.queries import get_boards, pinnable_board_ids
from ..entities import Board, Pin, User, pin_stats
from ..errors import DomainError, Forbidden, InvalidField, NotFoundError, TooLarge
from ..grid import pin_item
from ..http_errors import with_retry_after
from ..ids import parse_id
from ..image_files import image_url, is_private, read
from ..likes.queries import likes_pin
from ..users.auth import get_pinner, signed_in_pinner
from ..views_common import act, next_url, pinner_required
from .actions import (
    add_comment,
    create_pin,
    create_pin_from_url,
    delete_comment,
    delete_pin,
    save_pin,
    update_pin,
)
from .images import FILES, file_keys
from .pin_page import read_pin_page

#: How long a browser may keep a secret board's pin's image.
PRIVATE_IMAGE_SECONDS = 300
#: The boards a save or create form offers: the pinner's newest this many.
BOARD_CHOICES = 200


def _my_boards(pinner: User | None) -> list[Board]:
    return get_boards(pinnable_board_ids(pinner["id"], limit=BOARD_CHOICES)) if pinner else []


def _save_choices(pinner: User | None, board: Board) -> list[Board]:
    """The boards the pinner may save a pin of ``board`` to (``social.rules.may_copy_to``)."""
    if pinner is None or not may_act_on(pinner["id"], board):
        return []
    return [b for b in _my_boards(pinner) if may_copy_to(pinner["id"], board, b)]


def _form_errors(error: DomainError) -> dict[str, str]:
    """Errors on the pin form's fields: a board that is not yours, an image too large, ..."""
    if error.field:
        return {error.field: error.message}
    if isinstance(error, TooLarge):
        return {"image": error.message}
    if isinstance(error, (NotFoundError, Forbidden)):
        return {"board": "choose one of your boards"}
    return {"form": error.message}


def detail(request: HttpRequest, pin_id: str) -> HttpResponse:
    wanted = parse_id(pin_id, "pin")
    pinner = get_pinner(request)
    viewer = pinner["id"] if pinner else None
    found = read_pin_page(wanted, viewer, cursor=request.GET.get("comments") or None)
    pin, board, owner = found.pin, found.board, found.owner
    assert owner is not None  # read_pin_page reads it, with_owner
    context = {
        "pin": {**pin_item(pin), "saved_from": shown_saved_from(pin)},
        "board": board,
        "owner": owner,
        "comments": found.comments,
        "comments_cursor": found.comments_cursor,
        "liked": likes_pin(pinner["id"], pin["id"]) if pinner else False,
        "my_boards": _save_choices(pinner, board),
        # An invitee sees a secret board's pins, to decide, and does nothing with them.
        "may_act": pinner is not None and may_act_on(viewer, board),
        "is_owner": pinner is not None and pinner["id"] == owner["id"],
        "may_edit": viewer == owner["id"] and is_member(viewer, board),
        "owns_board": viewer == board["owner_id"],  # may delete a collaborator's pin
        "counts": pin_stats(pin),
    }
    return render(request, "pins/detail.html", context)


def _board_choice(value: object) -> int:
    try:
        return parse_id(value, "board")
    except NotFoundError:
        raise NotFoundError("choose one of your boards", field="board") from None


def _create(pinner_id: int, request: HttpRequest) -> Pin:
    """A pin of the uploaded image, or of the one fetched from the URL pasted instead."""
    board, image = _board_choice(request.POST.get("board")), request.FILES.get("image")
    source_url = request.POST.get("source_url", "").strip()
    description, link = request.POST.get("description", ""), request.POST.get("link", "")
    if not source_url:
        return create_pin(pinner_id, board, image, description, link)
    if image is not None:
        raise InvalidField("choose a file or paste a URL, not both", field="source_url")
    return create_pin_from_url(pinner_id, board, source_url, description, link)


def image(request: HttpRequest, pin_id: str, variant: str) -> HttpResponse:
    """A file of a secret board's pin, to those who may see the pin (``pins.images``):
    a 404 to anyone else, as for a pin that does not exist; never cached by others."""
    pinner = get_pinner(request)
    pin, _ = visible_pin(pinner["id"] if pinner else None, parse_id(pin_id, "pin"))
    key = file_keys(pin["image"]).get(FILES.get(variant, ""))
    if not key:
        raise Http404("no such image")
    if not is_private(key):  # the board is public (again): the file has a public URL
        return redirect(image_url(key))
    response = HttpResponse(read(key), content_type="image/jpeg")
    response["Cache-Control"] = f"private, max-age={PRIVATE_IMAGE_SECONDS}"
    return response


@pinner_required
def create(request: HttpRequest) -> HttpResponse:
    pinner = signed_in_pinner(request)
    errors: dict[str, str] = {}
    status, refusal = 200, None
    values: Mapping[str, Any] = request.GET
    if request.method == "POST":
        values = request.POST
        try:
            ratelimit.check_pinner(pinner["id"], "pin")  # before the image is decoded
            pin = _create(pinner["id"], request)
        except DomainError as error:
            refusal, errors, status = error, _form_errors(error), error.status
        else:
            return redirect("pin", pin["id"])
    context = {"errors": errors, "values": values, "boards": _my_boards(pinner), "pin": None}
    return with_retry_after(render(request, "pins/form.html", context, status=status), refusal)


@pinner_required
def edit(request: HttpRequest, pin_id: str) -> HttpResponse:
    pinner = signed_in_pinner(request)
    pin, _ = editable_pin(pinner["id"], parse_id(pin_id, "pin"))
    errors: dict[str, str] = {}
    status = 200
    values: Mapping[str, Any] = {**pin, "board": str(pin["board_id"])}
    if request.method == "POST":
        values = request.POST
        try:
            changes = {
                "description": values.get("description", ""),
                "link": values.get("link", ""),
                "board_id": _board_choice(values.get("board")) if values.get("board") else None,
            }
            update_pin(pinner["id"], pin["id"], changes)
        except DomainError as error:
            errors, status = _form_errors(error), error.status
        else:
            return redirect("pin", pin["id"])
    context = {
        "errors": errors,
        "values": values,
        "boards": _my_boards(pinner),
        "pin": pin_item(pin),
    }
    return render(request, "pins/form.html", context, status=status)


@require_POST
@pinner_required
def delete(request: HttpRequest, pin_id: str) -> HttpResponse:
    pinner = signed_in_pinner(request)
    delete_pin(pinner["id"], parse_id(pin_id, "pin"))
    messages.success(request, "Pin deleted.")
    return redirect(next_url(request, reverse("profile", args=[pinner["username"]])))


@require_POST
@pinner_required
def save(request: HttpRequest, pin_id: str) -> HttpResponse:
    me, pin = signed_in_pinner(request)["id"], parse_id(pin_id, "pin")

    def save_to_board() -> None:
        ratelimit.check_pinner(me, "pin")
        board = _board_choice(request.POST.get("board"))
        try:
            saved = save_pin(me, pin, board)
        except NotFoundError:
            visible_pin(me, pin)  # a pin the pinner may not see is a 404, as a missing one
            raise InvalidField("choose one of your boards", field="board") from None
        except Forbidden as refused:  # raised once the pin is known to be seen: flashed
            raise InvalidField(refused.message, field="board") from None
        url = reverse("pin", args=[saved["id"]])
        messages.success(request, format_html('Saved. <a href="{}">See your pin</a>', url))

    return act(request, save_to_board, reverse("pin", args=[pin]))


@require_POST
@pinner_required
def comment(request: HttpRequest, pin_id: str) -> HttpResponse:
    me, pin = signed_in_pinner(request)["id"], parse_id(pin_id, "pin")
    return act(
        request,
        lambda: add_comment(me, pin, request.POST.get("text")),
        reverse("pin", args=[pin]) + "#comments",
    )


@require_POST
@pinner_required
def remove_comment(request: HttpRequest, pin_id: str, comment_id: str) -> HttpResponse:
    me, pin = signed_in_pinner(request)["id"], parse_id(pin_id, "pin")
    comment = parse_id(comment_id, "comment")
    return act(
        request, lambda: delete_comment(me, pin, comment), reverse("pin", args=[pin]) + "#comments"
    )
