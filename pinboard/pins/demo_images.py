"""Demo pictures drawn with Pillow: no network, varied sizes for a lively grid."""

from __future__ import annotations

import io
import random

from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image, ImageDraw

PALETTES = [
    [(38, 70, 83), (42, 157, 143), (233, 196, 106), (244, 162, 97), (231, 111, 81)],
    [(255, 190, 11), (251, 86, 7), (255, 0, 110), (131, 56, 236), (58, 134, 255)],
    [(13, 27, 42), (27, 38, 59), (65, 90, 119), (119, 141, 169), (224, 225, 221)],
    [(96, 108, 56), (40, 54, 24), (254, 250, 224), (221, 161, 94), (188, 108, 37)],
    [(255, 173, 173), (255, 214, 165), (253, 255, 182), (202, 255, 191), (155, 246, 255)],
]


def demo_image(rng: random.Random, name: str = "demo.png") -> SimpleUploadedFile:
    """A random composition of soft shapes, 472 wide and 300-900 tall."""
    palette = rng.choice(PALETTES)
    width, height = 472, rng.randrange(300, 900, 20)
    image = Image.new("RGB", (width, height), rng.choice(palette))
    draw = ImageDraw.Draw(image)
    for _ in range(rng.randint(4, 9)):
        x, y = rng.randrange(-100, width), rng.randrange(-100, height)
        size = rng.randrange(60, 320)
        box = (x, y, x + size, y + size * rng.choice((1, 1, 2)) // 1)
        shape = rng.choice((draw.ellipse, draw.rectangle))
        shape(box, fill=rng.choice(palette))
    out = io.BytesIO()
    image.save(out, "PNG")
    return SimpleUploadedFile(name, out.getvalue(), content_type="image/png")
