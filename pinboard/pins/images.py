"""Pin images: an upload stored at up to 1600 px a side, with thumbnails for the grid.

The bytes are an upload's, or those fetch.py brought from a URL a pinner pasted: both
take the same path, through ``store_image``. The checks, the re-encoding and the file
names are every upload's (image_files.py). A pin's files are
``pins/ab/<sha256>-<8 hex>.jpg``, with ``_236.jpg`` and ``_472.jpg`` thumbnails for the
grid's ``srcset``: a save (repin) shares its source's files, and two uploads of the same
bytes do not, so deleting the files of one upload (``delete_image``, once no pin shows
it) never takes another's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, cast

from django.conf import settings
from django.urls import reverse
from PIL import Image

from ..entities import Pin, PinImage
from ..image_files import (
    content_name,
    delete_files,
    image_url,
    is_private,
    jpeg,
    read_image,
    save_all,
    storage_for,
)

THUMBNAIL_WIDTH = 236  # the classic grid column width
#: The grid's thumbnail for screens with two or more device pixels per CSS pixel (srcset).
THUMBNAIL_2X_WIDTH = 2 * THUMBNAIL_WIDTH
FULL_MAX_SIDE = 1600
#: Each file's name after the upload's stem, by the field of ``image`` that keys it.
SUFFIXES = {
    "key": ".jpg",
    "thumbnail_key": f"_{THUMBNAIL_WIDTH}.jpg",
    "thumbnail_2x_key": f"_{THUMBNAIL_2X_WIDTH}.jpg",
}


def store_image(upload: Any, *, private: bool = False) -> PinImage:
    """Validate an uploaded file and store it; returns the pin's ``image`` field. Every
    file is encoded before the first is stored, and a failure stores none. ``private``:
    for a pin on a secret board (``image_files.PRIVATE``)."""
    image = read_image(upload, "image")
    full = _fit(image, FULL_MAX_SIDE)
    thumb = _fit(image, THUMBNAIL_WIDTH, width_only=True)
    sharper = _fit(image, THUMBNAIL_2X_WIDTH, width_only=True)
    full_bytes = jpeg(full)
    base = content_name("pins", full_bytes, private=private)
    files = {"key": (base + SUFFIXES["key"], full_bytes)}
    files["thumbnail_key"] = (base + SUFFIXES["thumbnail_key"], jpeg(thumb))
    if sharper.width > thumb.width:  # a narrow image has no sharper thumbnail to give
        files["thumbnail_2x_key"] = (base + SUFFIXES["thumbnail_2x_key"], jpeg(sharper))
    keys = save_all(dict(files.values()))
    stored: dict[str, Any] = {field: keys[name] for field, (name, _) in files.items()}
    stored.update(width=full.width, height=full.height)
    stored.update(thumbnail_width=thumb.width, thumbnail_height=thumb.height)
    if "thumbnail_2x_key" in stored:
        stored["thumbnail_2x_width"] = sharper.width
    return cast("PinImage", stored)


#: The files of a pin's image, by the name of each in a URL (``pins.views.image``).
FILES = {"full": "key", "thumbnail": "thumbnail_key", "thumbnail_2x": "thumbnail_2x_key"}


class ImageUrls(NamedTuple):
    full: str
    thumbnail: str
    thumbnail_2x: str | None


def image_urls(pin: Pin) -> ImageUrls:
    """The URL of each file of the pin's image: the public one, or for a private file (a
    secret board's) one that only those who may see the pin can use."""
    image, pin_id = pin["image"], pin["id"]
    sharper = image.get("thumbnail_2x_key")
    return ImageUrls(
        _url(pin_id, "full", image["key"]),
        _url(pin_id, "thumbnail", image["thumbnail_key"]),
        _url(pin_id, "thumbnail_2x", sharper) if sharper else None,
    )


def _url(pin_id: int, variant: str, key: str) -> str:
    if not is_private(key):
        return image_url(key)
    if "private" in settings.STORAGES:  # S3: signed, and good for minutes
        return str(storage_for(key).url(key))
    return reverse("pin_image", args=[pin_id, variant])  # a view that checks who asks


def _fit(image: Image.Image, size: int, *, width_only: bool = False) -> Image.Image:
    scale = size / image.width if width_only else size / max(image.size)
    if scale >= 1:
        return image
    return image.resize(
        (max(1, round(image.width * scale)), max(1, round(image.height * scale))),
        Image.Resampling.LANCZOS,
    )


def delete_image(image: PinImage) -> None:
    """Delete an upload's files (a file already gone is no error, so a retry is safe)."""
    delete_files(file_keys(image).values())


def file_keys(image: PinImage) -> dict[str, str]:
    """The keys of the image's files, by the field of ``image`` that holds each (those it
    has: ``SUFFIXES``)."""
    fields: Mapping[str, Any] = image
    return {field: fields[field] for field in SUFFIXES if fields.get(field)}
