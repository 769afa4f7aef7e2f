"""The pixel budget: an image declaring too many pixels is refused from its header, undecoded.

A few KB of PNG can declare 6000x6000 pixels, which cost about 350 MB and over
a second to decode. Pillow counts every image it allocates
(``Image.core.get_stats()``): a refused upload must allocate none.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from PIL import Image

from pinboard import image_files
from pinboard.data_plane import cached_store
from pinboard.image_files import MAX_PIXELS
from pinboard.pins.actions import create_pin
from pinboard.pins.queries import board_pins_page
from shardstore import ShardReadOnly
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


def stored_files() -> set[str]:
    root = Path(settings.MEDIA_ROOT)
    return {str(path) for path in root.rglob("*") if path.is_file()} if root.exists() else set()


@pytest.mark.parametrize(
    ("width", "height"), [(1, 100_000), (300, 70_000), (100_000, 1), (21, 1), (1, 21)]
)
def test_an_image_longer_than_20_to_1_is_refused_and_stores_nothing(
    ada: Api, width: int, height: int
) -> None:
    board = ada.new_board("Strips")
    before = stored_files()
    response = ada.upload(
        {"board_id": board["id"], "image": upload("strip.png", declared_png(width, height))}
    )
    assert "at most 20 times as long as they are wide" in error_of(response, 422)["message"]
    assert board_pins_page(int(board["id"])).ids == [] and stored_files() == before
    response = ada.put_avatar({"image": upload("strip.png", declared_png(width, height))})
    assert error_of(response, 422)["field"] == "image"


@pytest.mark.parametrize(("width", "height"), [(20, 400), (3000, 150), (50, 1000)])
def test_an_image_up_to_20_to_1_is_pinned_with_thumbnails_a_jpeg_can_hold(
    ada: Api, width: int, height: int
) -> None:
    board = ada.new_board("Long")
    pin = ada.new_pin(board["id"], image_upload(size=(width, height)))
    assert max(pin["width"], pin["height"]) <= 1600


def test_an_upload_whose_files_fail_to_store_leaves_none(
    ada: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = ada.new_board("Full disk")
    before, saved = stored_files(), []
    real_save = image_files.save

    def save_once(name: str, data: bytes) -> str:
        if saved:
            raise OSError("no space left on device")
        saved.append(name)
        return real_save(name, data)

    monkeypatch.setattr(image_files, "save", save_once)
    with pytest.raises(OSError):
        create_pin(int(ada.id), int(board["id"]), image_upload(size=(600, 400)))
    assert saved and stored_files() == before
    assert board_pins_page(int(board["id"])).ids == []


def test_a_pin_that_cannot_be_written_leaves_no_files(
    ada: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = ada.new_board("Read-only")
    before = stored_files()
    pins = cached_store().objects("pin")

    def refused(self: Any, shard_id: int, data: Any, **_: Any) -> int:
        raise ShardReadOnly(shard_id, "db1", "read_only is on")

    monkeypatch.setattr(type(pins), "create", refused)
    with pytest.raises(ShardReadOnly):
        create_pin(int(ada.id), int(board["id"]), image_upload(size=(600, 400)))
    assert stored_files() == before
