"""Pin images: checked by content with Pillow, re-encoded, stored with a thumbnail.

The bytes are an upload's, or those fetch.py brought from a URL a pinner pasted:
both take the same path, through ``store_image``. Re-encoding drops anything but pixels (metadata, trailing payloads) and gives
every stored image the same format. Each upload gets files of its own, named
by the hash of the re-encoded bytes plus a random suffix
(``pins/ab/<sha256>-<8 hex>.jpg``, with ``_236.jpg`` and ``_472.jpg`` thumbnails for
the grid's ``srcset``; never rewritten): a save (repin) shares its
source's files, and two uploads of the same bytes do not, so deleting the files
of one upload (``delete_image``, once no pin shows it) never takes another's.
"""

from __future__ import annotations

import hashlib
import io
import secrets
import warnings
from functools import lru_cache
from typing import Any

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.signals import setting_changed
from django.dispatch import receiver
from PIL import Image, ImageOps, UnidentifiedImageError

from ..errors import InvalidField, TooLarge

MAX_BYTES = 10 * 1024 * 1024
# The pixel budget of one upload, checked on the size the header declares, before any
# decoding. Decoding costs several bytes a pixel at each step (decode, RGBA, RGB), about
# 10 bytes a pixel in all, while a few KB of PNG can declare any size: a 6000x6000
# declaration (36 MP, ~350 MB to decode) is refused; 24 MP still takes a 6000x4000 photo.
MAX_PIXELS = 24_000_000
# Pillow's own bomb check uses the same budget, so no other code path decodes more
# (it warns above the limit and refuses outright above twice the limit).
Image.MAX_IMAGE_PIXELS = MAX_PIXELS
ACCEPTED_FORMATS = {"JPEG", "PNG", "GIF", "WEBP"}
THUMBNAIL_WIDTH = 236  # the classic grid column width
#: The grid's thumbnail for screens with two or more device pixels per CSS pixel (srcset).
THUMBNAIL_2X_WIDTH = 2 * THUMBNAIL_WIDTH
FULL_MAX_SIDE = 1600


def store_image(upload: Any) -> dict[str, Any]:
    """Validate an uploaded file and store it; returns the pin's ``image`` field."""
    if upload is None:
        raise InvalidField("an image file is required", field="image")
    if upload.size > MAX_BYTES:
        raise TooLarge(f"images must be at most {MAX_BYTES // (1024 * 1024)} MB")
    raw = upload.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise TooLarge(f"images must be at most {MAX_BYTES // (1024 * 1024)} MB")
    image = _open(raw)
    full = _fit(image, FULL_MAX_SIDE)
    thumb = _fit(image, THUMBNAIL_WIDTH, width_only=True)
    full_bytes, thumb_bytes = _jpeg(full), _jpeg(thumb)
    digest = hashlib.sha256(full_bytes).hexdigest()
    base = f"pins/{digest[:2]}/{digest}-{secrets.token_hex(4)}"
    stored = {
        "key": _save(f"{base}.jpg", full_bytes),
        "thumbnail_key": _save(f"{base}_{THUMBNAIL_WIDTH}.jpg", thumb_bytes),
        "width": full.width,
        "height": full.height,
        "thumbnail_width": thumb.width,
        "thumbnail_height": thumb.height,
    }
    sharper = _fit(image, THUMBNAIL_2X_WIDTH, width_only=True)
    if sharper.width > thumb.width:  # a narrow image has no sharper thumbnail to give
        stored["thumbnail_2x_key"] = _save(f"{base}_{THUMBNAIL_2X_WIDTH}.jpg", _jpeg(sharper))
        stored["thumbnail_2x_width"] = sharper.width
    return stored


@lru_cache(maxsize=50_000)
def image_url(key: str) -> str:
    """The public URL of a stored file. Files are never rewritten and URLs carry no
    signature (prod: ``querystring_auth`` off), so a key's URL never changes: remembered,
    since a page of 50 pins would otherwise build 100 URLs through the storage."""
    return default_storage.url(key)


@receiver(setting_changed)
def _storage_changed(*, setting: str, **kwargs: Any) -> None:
    if setting in ("STORAGES", "MEDIA_URL"):
        image_url.cache_clear()


def _too_many_pixels(declared: str) -> InvalidField:
    budget = MAX_PIXELS // 1_000_000
    return InvalidField(f"images must be at most {budget} megapixels ({declared})", field="image")


def _open(raw: bytes) -> Image.Image:
    not_an_image = InvalidField("the file is not a JPEG, PNG, GIF or WebP image", field="image")
    try:
        with warnings.catch_warnings():
            # Pillow warns between one and two budgets: the check below refuses those, naming
            # the budget.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            probe = Image.open(io.BytesIO(raw))  # reads the header only: nothing decoded yet
        if probe.format not in ACCEPTED_FORMATS:
            raise not_an_image
        width, height = probe.size
        if width * height > MAX_PIXELS:
            raise _too_many_pixels(
                f"{width}\N{MULTIPLICATION SIGN}{height} is {width * height / 1_000_000:.4g}"
            )
        probe.verify()  # checks the structure; the object cannot be used after
        image: Image.Image = Image.open(io.BytesIO(raw))
        image.load()
    except InvalidField:
        raise
    except Image.DecompressionBombError:  # declares over twice the budget
        raise _too_many_pixels(f"this one declares over {2 * MAX_PIXELS // 1_000_000}") from None
    except UnidentifiedImageError:
        raise not_an_image from None
    except (OSError, SyntaxError, ValueError, EOFError):  # truncated or corrupt data
        raise not_an_image from None
    image = ImageOps.exif_transpose(image)
    if image.mode != "RGB":
        background = Image.new("RGB", image.size, (255, 255, 255))
        rgba = image.convert("RGBA")
        background.paste(rgba, mask=rgba.getchannel("A"))
        image = background
    return image


def _fit(image: Image.Image, size: int, *, width_only: bool = False) -> Image.Image:
    scale = size / image.width if width_only else size / max(image.size)
    if scale >= 1:
        return image
    return image.resize(
        (max(1, round(image.width * scale)), max(1, round(image.height * scale))),
        Image.Resampling.LANCZOS,
    )


def _jpeg(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85, optimize=True, progressive=True)
    return out.getvalue()


def delete_image(image: dict[str, Any]) -> None:
    """Delete an upload's files (a file already gone is no error, so a retry is safe)."""
    for key in (image["key"], image["thumbnail_key"], image.get("thumbnail_2x_key")):
        if key:
            default_storage.delete(key)


def _save(name: str, data: bytes) -> str:
    # The storage appends to the name rather than overwrite, should the suffix repeat.
    return default_storage.save(name, ContentFile(data))
