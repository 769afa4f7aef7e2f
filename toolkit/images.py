"""Pictures for the tests, the benchmarks and the drills' load: real images, drawn in memory
with Pillow, small enough to cost nothing to upload.

The site's demo pictures (``seed_demo``) are the site's own, drawn at run time by
pinboard/pins/demo_images.py; nothing here is needed by the site.
"""

from __future__ import annotations

import io

from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image, ImageDraw

#: What a test picture is unless asked otherwise: 40 x 30 pixels of one colour.
SIZE = (40, 30)
COLOUR = (200, 40, 90)


def image_bytes(size: tuple[int, int] = SIZE, fmt: str = "PNG") -> bytes:
    """A plain picture of ``size``, encoded as ``fmt`` (any format Pillow writes)."""
    return _encode(Image.new("RGB", size, COLOUR), fmt)


def image_upload(
    name: str = "pin.png", *, size: tuple[int, int] = SIZE, fmt: str = "PNG"
) -> SimpleUploadedFile:
    """``image_bytes`` as the file of an upload form, named ``name``."""
    return SimpleUploadedFile(name, image_bytes(size, fmt), content_type=f"image/{fmt.lower()}")


def numbered_png(index: int, size: tuple[int, int] = (240, 320)) -> bytes:
    """A PNG with a colour and a shape of its own and ``pin INDEX`` written on it, so that
    pins told apart by their picture (on a screenshot, say) look apart."""
    colour = ((53 * index) % 256, (97 * index + 80) % 256, (151 * index + 160) % 256)
    image = Image.new("RGB", size, colour)
    draw = ImageDraw.Draw(image)
    width, height = size
    draw.ellipse((width // 5, height // 5, width * 4 // 5, height * 4 // 5), fill=(250, 250, 245))
    draw.text((10, 10), f"pin {index}", fill=(20, 20, 20))
    return _encode(image, "PNG")


def _encode(image: Image.Image, fmt: str) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()
