"""Avatars: a pinner's picture, cropped to a square, stored at two sizes, shown by size.

An upload passes every image's checks (size, pixel budget, re-encoding: image_files.py);
its centre square is stored as ``avatars/ab/<sha256>-<8 hex>_60.jpg`` and ``_120.jpg``
and the user object records their keys by size, ``"avatar": {"60": key, "120": key}``.
The files are never rewritten: a new avatar gets new files, and the old ones are deleted
once the user object no longer names them (``tasks.release_avatar``; a deleted account's
purge deletes its last ones). A pinner without an avatar is shown their initial.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape as html_escape
from typing import Any, cast

from PIL import Image, ImageOps

from ..entities import Avatar, User
from ..image_files import content_name, delete_files, image_url, jpeg, read_image, save_all

#: The sides stored, in pixels: 60 for the small circles (cards, lists, the top bar: up to
#: 40 CSS pixels, sharp on most screens), 120 for a profile's head.
SMALL, LARGE = 60, 120
SIZES = (SMALL, LARGE)


def store_avatar(upload: Any) -> Avatar:
    """Check the upload as an image and store its centre square at each size; returns the
    user object's ``avatar`` field. InvalidField names the form field ``image``."""
    image = read_image(upload, "image")
    squares = {
        size: jpeg(ImageOps.fit(image, (size, size), Image.Resampling.LANCZOS)) for size in SIZES
    }
    base = content_name("avatars", squares[LARGE])
    keys = save_all({f"{base}_{size}.jpg": data for size, data in squares.items()})
    return cast("Avatar", {str(size): keys[f"{base}_{size}.jpg"] for size in SIZES})


def delete_avatar(avatar: Avatar) -> None:
    """Delete an avatar's files (a file already gone is no error, so a retry is safe)."""
    delete_files(_files(avatar).values())


def avatar_key(avatar: Avatar, size: int) -> str:
    """The key of the avatar's file at ``size`` (one of ``SIZES``)."""
    return _files(avatar)[str(size)]


def _files(avatar: Avatar) -> Mapping[str, str]:
    return cast("Mapping[str, str]", avatar)  # its keys are the sizes, as strings


def avatar_url(user: User, size: int) -> str | None:
    """The URL of the pinner's avatar at ``size`` (one of ``SIZES``), or None without one."""
    avatar = user.get("avatar")
    return image_url(avatar_key(avatar, size)) if avatar else None


def avatar_face(user: User, size: int) -> str:
    """What fills an avatar's circle (``.avatar`` in the style sheet), as HTML: the picture
    at ``size``, or the pinner's initial, which needs no request. The circle around it is
    the caller's; the picture has no text of its own, as the pinner is named beside it."""
    url = avatar_url(user, size)
    if url is None:
        return html_escape(user["username"][:1].upper())
    return f'<img src="{html_escape(url)}" alt="" width="{size}" height="{size}">'
