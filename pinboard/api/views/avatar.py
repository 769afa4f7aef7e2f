"""Your avatar: set it from an uploaded image, or remove it."""

from __future__ import annotations

from typing import Annotated, TypedDict

from django.http import HttpRequest, HttpResponse
from msgspec import Meta

from ... import ratelimit
from ...errors import InvalidField, NotFoundError, RateLimited
from ...image_files import MAX_ASPECT_RATIO, MAX_BYTES, MAX_PIXELS
from ...users.actions import remove_avatar, set_avatar
from ...users.avatars import SIZES
from .. import serializers
from ..http import endpoint, image_file, multipart_body, no_content, ok, require_pinner
from ..operations import MULTIPART, operation
from ..schemas import Me


class AvatarUpload(TypedDict):  # multipart form fields
    image: Annotated[
        str,
        Meta(
            description="JPEG, PNG, GIF or WebP, at most"
            f" {MAX_BYTES // (1024 * 1024)} MB and {MAX_PIXELS // 1_000_000} megapixels, its"
            f" longer side at most {MAX_ASPECT_RATIO} times the shorter; checked by content."
            " Its centre square is kept.",
            extra_json_schema={"format": "binary"},
        ),
    ]


@operation(
    "Set your avatar from an image: its centre square, stored at"
    f" {' and '.join(map(str, SIZES))} px; the avatar it replaces is deleted",
    ok=Me,
    errors=(NotFoundError, InvalidField, RateLimited),
    auth=True,
    body=AvatarUpload,
    media_type=MULTIPART,
)
def _put(request: HttpRequest) -> HttpResponse:
    """Multipart, as a pin's upload: ``image`` (a file)."""
    pinner = require_pinner(request)
    ratelimit.check_pinner(pinner["id"], "avatar")  # before the image is decoded
    fields, files = multipart_body(request, AvatarUpload, "the avatar")
    return ok(serializers.me(set_avatar(pinner["id"], image_file(fields, files))))


@operation(
    "Remove your avatar (your initial is shown instead); its files are deleted",
    errors=(NotFoundError,),
    auth=True,
)
def _delete(request: HttpRequest) -> HttpResponse:
    remove_avatar(require_pinner(request)["id"])
    return no_content()


avatar = endpoint(PUT=_put, DELETE=_delete)
