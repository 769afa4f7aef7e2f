"""Uploaded images (pin images, avatars): checked by content with Pillow, re-encoded as
JPEG, stored under names made from their content.

Only bytes the client uploads are accepted; nothing is fetched from a URL.
Re-encoding drops anything but pixels (metadata, trailing payloads) and gives
every stored image the same format. Each upload gets files of its own, named by
the hash of the re-encoded bytes plus a random suffix (``<folder>/ab/<sha256>-<8
hex>...``, never rewritten), so deleting one upload's files never takes another's. An
upload's files are encoded first, then stored all or none (``save_all``).
What each kind of image stores (sizes, crops) is its own module's: pins/images.py,
users/avatars.py.
"""

from __future__ import annotations

import hashlib
import io
import posixpath
import re
import secrets
import warnings
from collections.abc import Iterable
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import Storage, default_storage, storages
from django.core.signals import setting_changed
from django.dispatch import receiver
from PIL import Image, ImageOps, UnidentifiedImageError

from .errors import InvalidField, TooLarge

MAX_BYTES = 10 * 1024 * 1024
# The pixel budget of one upload, checked on the size the header declares, before any
# decoding. Decoding costs several bytes a pixel at each step (decode, RGBA, RGB), about
# 10 bytes a pixel in all, while a few KB of PNG can declare any size: a 6000x6000
# declaration (36 MP, ~350 MB to decode) is refused; 24 MP still takes a 6000x4000 photo.
MAX_PIXELS = 24_000_000
# Pillow's own bomb check uses the same budget, so no other code path decodes more
# (it warns above the limit and refuses outright above twice the limit).
Image.MAX_IMAGE_PIXELS = MAX_PIXELS
#: The key prefix of files only some may see: never served as public media.
PRIVATE = "private/"
# The longest side at most this many times the shortest: a 1x100000 strip fits the pixel
# budget, yet its thumbnails would be taller than a JPEG may be (65,500 px), and no grid
# shows it.
MAX_ASPECT_RATIO = 20
ACCEPTED_FORMATS = {"JPEG", "PNG", "GIF", "WEBP"}


def read_image(upload: Any, field: str) -> Image.Image:
    """The uploaded file's picture, decoded to RGB, upright; TooLarge past ``MAX_BYTES``,
    InvalidField on ``field`` if it is missing, not an accepted image or too many pixels."""
    if upload is None:
        raise InvalidField("an image file is required", field=field)
    too_large = TooLarge(f"images must be at most {MAX_BYTES // (1024 * 1024)} MB")
    if upload.size > MAX_BYTES:
        raise too_large
    raw = upload.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise too_large
    return _open(raw, field)


def _too_many_pixels(declared: str, field: str) -> InvalidField:
    budget = MAX_PIXELS // 1_000_000
    return InvalidField(f"images must be at most {budget} megapixels ({declared})", field=field)


def _open(raw: bytes, field: str) -> Image.Image:
    not_an_image = InvalidField("the file is not a JPEG, PNG, GIF or WebP image", field=field)
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
                f"{width}\N{MULTIPLICATION SIGN}{height} is {width * height / 1_000_000:.4g}",
                field,
            )
        if max(width, height) > MAX_ASPECT_RATIO * max(1, min(width, height)):
            raise InvalidField(
                f"images must be at most {MAX_ASPECT_RATIO} times as long as they are wide"
                f" ({width}\N{MULTIPLICATION SIGN}{height} is not)",
                field=field,
            )
        probe.verify()  # checks the structure; the object cannot be used after
        image: Image.Image = Image.open(io.BytesIO(raw))
        image.load()
    except InvalidField:
        raise
    except Image.DecompressionBombError:  # declares over twice the budget
        over = f"this one declares over {2 * MAX_PIXELS // 1_000_000}"
        raise _too_many_pixels(over, field) from None
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


def jpeg(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85, optimize=True, progressive=True)
    return out.getvalue()


def content_name(folder: str, data: bytes, *, private: bool = False) -> str:
    """A new file name stem for an upload whose main file is ``data``: its hash, and a random
    suffix so that two uploads of the same bytes do not share files. Files only some may
    see (a secret board's pins') go under ``PRIVATE``, named by 128 random bits alone:
    whoever holds the picture (its public copy, the page it came from) can hash it, so a
    name built on the hash would be as hard to guess as its random part only."""
    if private:
        name = secrets.token_hex(16)
        return f"{PRIVATE}{folder}/{name[:2]}/{name}"
    digest = hashlib.sha256(data).hexdigest()
    return f"{folder}/{digest[:2]}/{digest}-{secrets.token_hex(4)}"


def is_private(key: str) -> bool:
    return key.startswith(PRIVATE)


# A private file's name (``content_name``) wherever a URL holds it: its path on S3 or the
# media domain, a signed URL's, a proxy's query that carries it.
_PRIVATE_NAME = re.compile(PRIVATE + r"[a-z]+/[0-9a-f]{2}/[0-9a-f]{32}", re.IGNORECASE)


def names_private_file(url: str) -> bool:
    """Whether ``url`` names one of the site's private files, however spelled (percent-encoded
    once or twice, with dot segments or doubled slashes): a pin from a URL copies no secret
    board's image out of it (``social.rules.may_copy_to`` says where a save may)."""
    decoded = unquote(unquote(url)).replace("\\", "/")
    return any(_PRIVATE_NAME.search(text) for text in (decoded, posixpath.normpath(decoded)))


def storage_for(key: str) -> Storage:
    """Where a file lives: private files in the ``private`` storage where there is one
    (S3: short-lived signed URLs, not cached by the public), else beside the others (the
    embedded default, where a view checks who asks: ``pins.views.image``)."""
    if is_private(key) and "private" in settings.STORAGES:
        return storages["private"]
    return default_storage


def save(name: str, data: bytes) -> str:
    """Store ``data``; the key it is stored under."""
    # The storage appends to the name rather than overwrite, should the suffix repeat.
    return storage_for(name).save(name, ContentFile(data))


def read(key: str) -> bytes:
    with storage_for(key).open(key, "rb") as stored:
        data: bytes = stored.read()
        return data


def save_all(files: dict[str, bytes]) -> dict[str, str]:
    """Store an upload's files (name -> bytes, all encoded already): all of them or none.
    A failure deletes those stored before it, then raises. Returns each name's key."""
    stored: dict[str, str] = {}
    try:
        for name, data in files.items():
            stored[name] = save(name, data)
    except BaseException:
        delete_files(stored.values())
        raise
    return stored


def delete_files(keys: Iterable[str | None]) -> None:
    """Delete stored files (a file already gone is no error, so a retry is safe)."""
    for key in keys:
        if key:
            storage_for(key).delete(key)


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
