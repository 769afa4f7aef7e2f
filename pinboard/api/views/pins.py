"""Pins: upload, pin from a URL, read, edit, delete, save (repin), likes and comments."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, NotRequired, TypedDict

from django.http import HttpRequest, HttpResponse
from msgspec import Meta

from shardstore import shard_of

from ... import entities, ratelimit
from ...boards.privacy import visible_pin
from ...errors import (
    BadRequest,
    CouldNotFetch,
    Forbidden,
    InvalidField,
    NotFoundError,
    RateLimited,
)
from ...ids import parse_id
from ...image_files import MAX_ASPECT_RATIO, MAX_BYTES, MAX_PIXELS
from ...likes import actions as like_actions
from ...likes.queries import read_likers
from ...pins import actions
from ...pins.fetch import MAX_REDIRECTS, MAX_URL
from ...pins.pin_page import read_pin_page
from ...users.queries import get_user, get_users
from .. import serializers
from ..http import (
    PageQuery,
    created,
    endpoint,
    id_field,
    image_file,
    json_body,
    multipart_body,
    no_content,
    ok,
    page,
    page_params,
    require_pinner,
    viewer_id,
)
from ..idempotency import form_content, idempotent, key_of
from ..operations import MULTIPART, operation
from ..schemas import Comment, CommentList, Id, Pin, UserList

Description = Annotated[str, Meta(max_length=actions.MAX_DESCRIPTION)]
Link = Annotated[str, Meta(max_length=actions.MAX_LINK)]


class PinUpload(TypedDict):  # multipart form fields
    board_id: Id
    description: NotRequired[Description]
    link: NotRequired[Annotated[Link, Meta(description="An http(s) URL.")]]
    image: Annotated[
        str,
        Meta(
            description="JPEG, PNG, GIF or WebP, at most"
            f" {MAX_BYTES // (1024 * 1024)} MB and {MAX_PIXELS // 1_000_000} megapixels, its"
            f" longer side at most {MAX_ASPECT_RATIO} times the shorter; checked by content.",
            extra_json_schema={"format": "binary"},
        ),
    ]


class PinFromUrl(TypedDict):
    board_id: Id
    source_url: Annotated[
        str,
        Meta(
            max_length=MAX_URL,
            description="An http(s) URL of a JPEG, PNG, GIF or WebP image, or of a web page:"
            " its og:image (or twitter:image), else its largest <img>, is pinned. The server"
            " fetches it from public addresses only, following at most"
            f" {MAX_REDIRECTS} redirects, within a time limit; the image at most"
            f" {MAX_BYTES // (1024 * 1024)} MB, checked as an upload is.",
        ),
    ]
    description: NotRequired[Description]
    link: NotRequired[
        Annotated[
            Link,
            Meta(description="An http(s) URL; without one, the pin links to where source_url led."),
        ]
    ]


class PinEdit(TypedDict, total=False):
    description: Annotated[Description | None, Meta(description="Null means empty.")]
    link: Annotated[Link | None, Meta(description="An http(s) URL; empty or null for none.")]
    board_id: Id


class PinSave(TypedDict):
    board_id: Id
    description: NotRequired[
        Annotated[
            Description | None, Meta(description="Null or absent: the source pin's description.")
        ]
    ]


class NewComment(TypedDict):
    text: Annotated[str, Meta(min_length=1, max_length=actions.MAX_COMMENT, pattern=r"\S")]


def _json_target(schema: type) -> Callable[..., tuple[int, object]]:
    """For a create whose body names the board its pin goes to: the board's shard."""

    def target(request: HttpRequest, **_: str) -> tuple[int, object]:
        data: Mapping[str, Any] = json_body(request, schema)
        return shard_of(id_field(data, "board_id", "board")), data

    return target


def _save_target(request: HttpRequest, pin_id: str) -> tuple[int, object]:
    parse_id(pin_id, "pin")  # a malformed source is a 404, as without a key
    return _json_target(PinSave)(request)


def pin_or_404(request: HttpRequest, raw_id: str) -> entities.Pin:
    """The pin, if it exists and the reader may see it (its board is not another's secret)."""
    pin, _ = visible_pin(viewer_id(request), parse_id(raw_id, "pin"))
    return pin


def _pin_made(request: HttpRequest, object_id: int, **_: str) -> HttpResponse:
    """The answer of a create or save sent again, for the pin an earlier attempt made."""
    return created(serializers.pin(actions.resume_pin(require_pinner(request)["id"], object_id)))


def _upload_board(fields: Any) -> int:
    if "board_id" not in fields:
        raise BadRequest("board_id is required", field="board_id")
    return id_field({"board_id": fields["board_id"]}, "board_id", "board")


def _upload_target(request: HttpRequest) -> tuple[int, object]:
    fields, files = multipart_body(request, PinUpload, "the pin")
    return shard_of(_upload_board(fields)), form_content(fields, files)


@operation(
    "Pin an image to one of your boards",
    ok=Pin,
    status=201,
    errors=(Forbidden, NotFoundError, InvalidField, RateLimited),
    auth=True,
    body=PinUpload,
    media_type=MULTIPART,
)
@idempotent(_upload_target, _pin_made)
def _create(request: HttpRequest) -> HttpResponse:
    """Multipart: ``board_id``, ``image`` (a file), optional ``description`` and ``link``."""
    pinner = require_pinner(request)
    ratelimit.check_pinner(pinner["id"], "pin")  # before the image is decoded
    fields, files = multipart_body(request, PinUpload, "the pin")
    if "board_id" not in fields:
        raise BadRequest("board_id is required", field="board_id")
    upload = image_file(fields, files)
    board_id = _upload_board(fields)
    pin = actions.create_pin(
        pinner["id"],
        board_id,
        upload,
        description=fields.get("description", ""),
        link=fields.get("link", ""),
        key=key_of(request),
    )
    return created(serializers.pin(pin))


@operation(
    "Pin the image at a URL, or the one a web page offers, to one of your boards",
    ok=Pin,
    status=201,
    errors=(Forbidden, NotFoundError, InvalidField, CouldNotFetch, RateLimited),
    auth=True,
    body=PinFromUrl,
)
@idempotent(_json_target(PinFromUrl), _pin_made)
def _create_from_url(request: HttpRequest) -> HttpResponse:
    pinner = require_pinner(request)
    ratelimit.check_pinner(pinner["id"], "pin")  # before anything is fetched
    data = json_body(request, PinFromUrl)
    pin = actions.create_pin_from_url(
        pinner["id"],
        id_field(data, "board_id", "board"),
        data["source_url"],
        description=data.get("description", ""),
        link=data.get("link", ""),
        key=key_of(request),
    )
    return created(serializers.pin(pin))


@operation("A pin", ok=Pin, errors=(NotFoundError,))
def _get(request: HttpRequest, pin_id: Id) -> HttpResponse:
    return ok(serializers.pin(pin_or_404(request, pin_id)))


@operation(
    "Edit your pin, or move it to another of your boards",
    ok=Pin,
    errors=(Forbidden, NotFoundError, InvalidField),
    auth=True,
    body=PinEdit,
)
def _update(request: HttpRequest, pin_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    pin_id_ = parse_id(pin_id, "pin")
    data = json_body(request, PinEdit)
    changes: dict[str, object] = dict(data)
    if "board_id" in data:
        changes["board_id"] = id_field(data, "board_id", "board")
    return ok(serializers.pin(actions.update_pin(pinner["id"], pin_id_, changes)))


@operation("Delete your pin", errors=(Forbidden, NotFoundError), auth=True)
def _delete(request: HttpRequest, pin_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    actions.delete_pin(pinner["id"], parse_id(pin_id, "pin"))
    return no_content()


@operation(
    "Save (repin) the pin to one of your boards: a new pin with `saved_from` (a secret"
    " board's pin: by its owner anywhere, by a collaborator to the owner's secret boards)",
    ok=Pin,
    status=201,
    errors=(Forbidden, NotFoundError, InvalidField, RateLimited),
    auth=True,
    body=PinSave,
)
@idempotent(_save_target, _pin_made)
def _save(request: HttpRequest, pin_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    ratelimit.check_pinner(pinner["id"], "pin")
    source_id = parse_id(pin_id, "pin")
    data = json_body(request, PinSave)
    board_id = id_field(data, "board_id", "board")
    pin = actions.save_pin(
        pinner["id"], source_id, board_id, data.get("description"), key=key_of(request)
    )
    return created(serializers.pin(pin))


@operation("Like the pin", errors=(Forbidden, NotFoundError), auth=True)
def _like(request: HttpRequest, pin_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    like_actions.like(pinner["id"], parse_id(pin_id, "pin"))
    return no_content()


@operation("Unlike the pin", errors=(NotFoundError,), auth=True)
def _unlike(request: HttpRequest, pin_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    pin = pin_or_404(request, pin_id)
    like_actions.unlike(pinner["id"], pin["id"])
    return no_content()


@operation("Who liked the pin, newest first", ok=UserList, errors=(NotFoundError,), query=PageQuery)
def _likes(request: HttpRequest, pin_id: Id) -> HttpResponse:
    limit, cursor = page_params(request)
    likers, next_cursor = read_likers(
        viewer_id(request), parse_id(pin_id, "pin"), limit=limit, cursor=cursor
    )
    return page([serializers.user(u) for u in likers], next_cursor)


def _comment_target(request: HttpRequest, pin_id: str) -> tuple[int, object]:
    """A comment lives on its pin's shard."""
    return shard_of(parse_id(pin_id, "pin")), json_body(request, NewComment)


def _comment_made(request: HttpRequest, object_id: int, pin_id: str) -> HttpResponse:
    pinner_id = require_pinner(request)["id"]
    comment = actions.resume_comment(pinner_id, object_id)
    return created(serializers.comment(comment, get_user(pinner_id)))


@operation(
    "Comment on the pin",
    ok=Comment,
    status=201,
    errors=(Forbidden, NotFoundError, InvalidField),
    auth=True,
    body=NewComment,
)
@idempotent(_comment_target, _comment_made)
def _comment(request: HttpRequest, pin_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    pin_id_ = parse_id(pin_id, "pin")
    data = json_body(request, NewComment)
    comment = actions.add_comment(pinner["id"], pin_id_, data["text"], key=key_of(request))
    return created(serializers.comment(comment, get_user(pinner["id"])))


@operation(
    "The pin's comments, oldest first",
    ok=CommentList,
    errors=(NotFoundError,),
    query=PageQuery,
)
def _comments(request: HttpRequest, pin_id: Id) -> HttpResponse:
    wanted = parse_id(pin_id, "pin")
    limit, cursor = page_params(request)
    found = read_pin_page(wanted, viewer_id(request), cursor=cursor, limit=limit, with_owner=False)
    # The page brings authors without their counts; a user always carries them: a third step.
    comments = found.comments
    authors = {u["id"]: u for u in get_users([c["author_id"] for c in comments], counts=True)}
    items = [serializers.comment(c, authors.get(c["author_id"])) for c in comments]
    return page(items, found.comments_cursor)


@operation(
    "Delete a comment: yours, or any on your pin",
    errors=(NotFoundError, Forbidden),
    auth=True,
)
def _delete_comment(request: HttpRequest, pin_id: Id, comment_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    pin_id_, comment_id_ = parse_id(pin_id, "pin"), parse_id(comment_id, "comment")
    actions.delete_comment(pinner["id"], pin_id_, comment_id_)
    return no_content()


pins = endpoint(POST=_create)
pins_from_url = endpoint(POST=_create_from_url)
pin = endpoint(GET=_get, PATCH=_update, DELETE=_delete)
save = endpoint(POST=_save)
like = endpoint(PUT=_like, DELETE=_unlike)
likes = endpoint(GET=_likes)
comments = endpoint(GET=_comments, POST=_comment)
comment = endpoint(DELETE=_delete_comment)
