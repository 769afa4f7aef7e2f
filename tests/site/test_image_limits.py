"""The pixel budget: an image declaring too many pixels is refused from its header, undecoded.

A few KB of PNG can declare 6000x6000 pixels, which cost about 350 MB and over
a second to decode. Pillow counts every image it allocates
(``Image.core.get_stats()``): a refused upload must allocate none.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from PIL import Image

from pinboard.image_files import MAX_PIXELS
from pinboard.pins.queries import board_pins_page
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import log_in, text
from toolkit.images import image_upload


def declared_png(width: int, height: int) -> bytes:
    """A valid 1-bit PNG of ``width`` x ``height`` zero pixels: tiny, as zeros compress."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)  # 1 bit, grayscale
    rows = (b"\x00" + bytes((width + 7) // 8)) * height  # filter byte, then the row
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="image/png")


def images_allocated() -> tuple[int, int]:
    stats = Image.core.get_stats()
    return stats["new_count"], stats["allocated_blocks"]


@pytest.fixture
def ada(client: Client, make_user: Callable[..., dict[str, Any]]) -> Api:
    return Api.as_pinner(client, make_user("ada"))


def test_the_budget_is_24_megapixels_for_pillow_too() -> None:
    assert MAX_PIXELS == 24_000_000
    assert Image.MAX_IMAGE_PIXELS == MAX_PIXELS  # no other code path decodes more


def test_a_tiny_png_declaring_6000x6000_is_refused_without_decoding(ada: Api) -> None:
    board = ada.new_board("Bombs")
    bomb = declared_png(6000, 6000)
    assert len(bomb) < 5000
    before = images_allocated()
    response = ada.upload({"board_id": board["id"], "image": upload("bomb.png", bomb)})
    error = error_of(response, 422)
    assert error["field"] == "image"
    assert "images must be at most 24 megapixels (6000\u00d76000 is 36)" in error["message"]
    assert images_allocated() == before  # not one pixel was decoded
    assert board_pins_page(int(board["id"])).ids == []
    # The counter does see decodes: a small real image allocates.
    ada.new_pin(board["id"], image_upload())
    assert images_allocated()[0] > before[0]


@pytest.mark.parametrize(("width", "height"), [(4899, 4900), (24_000_001, 1), (10_000, 10_000)])
def test_every_declaration_over_the_budget_is_refused(ada: Api, width: int, height: int) -> None:
    assert width * height > MAX_PIXELS
    board = ada.new_board("Over")
    before = images_allocated()
    response = ada.upload(
        {"board_id": board["id"], "image": upload("big.png", declared_png(width, height))}
    )
    assert "at most 24 megapixels" in error_of(response, 422)["message"]
    assert images_allocated() == before


def test_the_pin_page_names_the_limit(client: Client, cast: dict[str, Any]) -> None:
    log_in(client, cast["ann"])
    form = {"board": cast["recipes"]["id"], "image": upload("bomb.png", declared_png(6000, 6000))}
    response = client.post("/pin/new/", form)
    assert response.status_code == 422 and "at most 24 megapixels" in text(response)
