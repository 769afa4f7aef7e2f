"""Pins: upload, read, edit, delete, save (repin), likes and comments."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse

from ... import ratelimit
from ...errors import BadRequest, InvalidField, NotFoundError
from ...ids import parse_id
from ...likes import actions as like_actions
from ...likes.queries import likers_page
from ...pins import actions
from ...pins.queries import comments_page, get_pin
from ...users.queries import get_user, get_users
from .. import serializers
from ..http import (
    created,
    endpoint,
    id_field,
    json_body,
    no_content,
    ok,
    page,
    page_params,
    require_pinner,
)

UPLOAD_FIELDS = {"board_id", "description", "link", "image"}


def pin_or_404(raw_id: str) -> dict[str, Any]:
    pin = get_pin(parse_id(raw_id, "pin"))
    if pin is None:
        raise NotFoundError("no such pin")
    return pin


def _create(request: HttpRequest) -> HttpResponse:
    """Multipart: ``board_id``, ``image`` (a file), optional ``description`` and ``link``."""
    pinner = require_pinner(request)
    ratelimit.check_pinner(pinner["id"], "pin")  # before the image is decoded
    if request.content_type != "multipart/form-data":
        raise BadRequest("send the pin as multipart/form-data with an image file")
    fields, files = request.POST, request.FILES
    unknown = sorted((set(fields) | set(files)) - UPLOAD_FIELDS)
    if unknown:
        raise BadRequest(f"unknown field {unknown[0]!r}", field=unknown[0])
    if "board_id" not in fields:
        raise BadRequest("board_id is required", field="board_id")
    if "image" not in files:
        if "image" in fields:
            raise InvalidField("image must be a file, not a text field", field="image")
        raise BadRequest("image is required: a JPEG, PNG, GIF or WebP file", field="image")
    board_id = id_field({"board_id": fields["board_id"]}, "board_id", "board")
    pin = actions.create_pin(
        pinner["id"],
        board_id,
        files["image"],
        description=fields.get("description", ""),
        link=fields.get("link", ""),
    )
    return created(serializers.pin(pin))


def _get(request: HttpRequest, pin_id: str) -> HttpResponse:
    return ok(serializers.pin(pin_or_404(pin_id)))


def _update(request: HttpRequest, pin_id: str) -> HttpResponse:
    pinner = require_pinner(request)
    pin_id_ = parse_id(pin_id, "pin")
    data = json_body(request, optional=("description", "link", "board_id"))
    if "board_id" in data:
        data["board_id"] = id_field(data, "board_id", "board")
    return ok(serializers.pin(actions.update_pin(pinner["id"], pin_id_, data)))


def _delete(request: HttpRequest, pin_id: str) -> HttpResponse:
    pinner = require_pinner(request)
    actions.delete_pin(pinner["id"], parse_id(pin_id, "pin"))
    return no_content()


def _save(request: HttpRequest, pin_id: str) -> HttpResponse:
    pinner = require_pinner(request)
    ratelimit.check_pinner(pinner["id"], "pin")
    source_id = parse_id(pin_id, "pin")
    data = json_body(request, required=("board_id",), optional=("description",))
    board_id = id_field(data, "board_id", "board")
    pin = actions.save_pin(pinner["id"], source_id, board_id, data.get("description"))
    return created(serializers.pin(pin))


def _like(request: HttpRequest, pin_id: str) -> HttpResponse:
    pinner = require_pinner(request)
    like_actions.like(pinner["id"], parse_id(pin_id, "pin"))
    return no_content()


def _unlike(request: HttpRequest, pin_id: str) -> HttpResponse:
    pinner = require_pinner(request)
    pin = pin_or_404(pin_id)
    like_actions.unlike(pinner["id"], pin["id"])
    return no_content()


def _likes(request: HttpRequest, pin_id: str) -> HttpResponse:
    pin = pin_or_404(pin_id)
    limit, cursor = page_params(request)
    ids, next_cursor = likers_page(pin["id"], limit=limit, cursor=cursor)
    return page([serializers.user(u) for u in get_users(ids, counts=True)], next_cursor)


def _comment(request: HttpRequest, pin_id: str) -> HttpResponse:
    pinner = require_pinner(request)
    pin_id_ = parse_id(pin_id, "pin")
    data = json_body(request, required=("text",))
    comment = actions.add_comment(pinner["id"], pin_id_, data["text"])
    return created(serializers.comment(comment, get_user(pinner["id"])))


def _comments(request: HttpRequest, pin_id: str) -> HttpResponse:
    pin = pin_or_404(pin_id)
    limit, cursor = page_params(request)
    comments, next_cursor = comments_page(pin["id"], limit=limit, cursor=cursor)
    # The page brings authors without their counts; a user always carries them.
    authors = {u["id"]: u for u in get_users([c["author_id"] for c in comments], counts=True)}
    items = [serializers.comment(c, authors.get(c["author_id"])) for c in comments]
    return page(items, next_cursor)


pins = endpoint(POST=_create)
pin = endpoint(GET=_get, PATCH=_update, DELETE=_delete)
save = endpoint(POST=_save)
like = endpoint(PUT=_like, DELETE=_unlike)
likes = endpoint(GET=_likes)
comments = endpoint(GET=_comments, POST=_comment)
