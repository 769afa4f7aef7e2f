"""Deleting a pin: its likes, saves list and comments go, and its image once no pin shows it.

The delete action soft-deletes the pin and unlists it; ``purge_pin`` (eager here,
a Celery task in production) removes what still points at it. Image URLs are
asked through media serving as under DEBUG (``tests.site.media_urls``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.storage import default_storage
from django.test import Client

from pinboard.boards.actions import create_board
from pinboard.data_plane import cached_store
from pinboard.likes.actions import like
from pinboard.pins.actions import add_comment, create_pin, delete_pin, save_pin
from pinboard.pins.queries import get_pin
from pinboard.pins.tasks import purge_pin
from tests.site.api_client import Api
from tests.site.page_helpers import log_in
from toolkit.images import image_upload

pytestmark = pytest.mark.urls("tests.site.media_urls")


def files_of(pin: dict[str, Any]) -> list[str]:
    image = pin["image"]
    return [image[k] for k in ("key", "thumbnail_key", "thumbnail_2x_key") if k in image]


def served(client: Client, key: str) -> int:
    response = client.get(default_storage.url(key))
    if hasattr(response, "streaming_content"):
        response.close()
    return response.status_code


def assert_files(client: Client, pin: dict[str, Any], *, present: bool) -> None:
    for key in files_of(pin):
        assert default_storage.exists(key) is present, key
        assert served(client, key) == (200 if present else 404), key


def mapping(name: str) -> Any:
    return cached_store().mapping(name)


def test_deleting_a_pin_removes_its_likes_comments_and_saves_list(
    client: Client, cast: dict[str, Any], make_user: Callable[..., dict[str, Any]]
) -> None:
    ann, bob, pin_id = cast["ann"], cast["bob"], cast["pin"]
    cid = make_user("cid")
    like(bob["id"], pin_id)
    like(cid["id"], pin_id)
    comments = [add_comment(who["id"], pin_id, "Nice")["id"] for who in (bob, cid)]
    saved = save_pin(bob["id"], pin_id, cast["bobs"]["id"])
    source = get_pin(pin_id)
    assert source is not None and source["counts"]["pin_liked_by_users"] == 2

    response = Api.as_pinner(client, ann).delete(f"/pins/{pin_id}")
    assert response.status_code == 204

    assert mapping("pin_liked_by_users").count(pin_id) == 0
    for who in (bob, cid):
        assert not mapping("user_likes_pins").contains(who["id"], pin_id)
        assert mapping("user_likes_pins").count(who["id"]) == 0
    assert mapping("pin_saved_as_pins").count(pin_id) == 0
    assert mapping("pin_has_comments").count(pin_id) == 0
    assert cached_store().objects("comment").get_many(comments) == []
    # bob's save is his own pin: it stays, and so do the files it shows.
    assert get_pin(saved["id"]) is not None
    assert_files(client, source, present=True)


def test_a_deleted_pins_image_files_are_deleted_and_404(
    client: Client, cast: dict[str, Any]
) -> None:
    ann = cast["ann"]
    pin = create_pin(ann["id"], cast["recipes"]["id"], image_upload(size=(600, 450)), "Gone")
    assert len(files_of(pin)) == 3  # the image, and thumbnails 236 and 472 wide
    assert_files(client, pin, present=True)
    log_in(client, ann)
    assert client.post(f"/pin/{pin['id']}/delete/").status_code == 302
    assert get_pin(pin["id"]) is None
    assert_files(client, pin, present=False)


def test_the_files_go_with_the_last_pin_that_shows_them(
    client: Client, cast: dict[str, Any], make_user: Callable[..., dict[str, Any]]
) -> None:
    ann, bob, cid = cast["ann"], cast["bob"], make_user("cid")
    upload = create_pin(ann["id"], cast["recipes"]["id"], image_upload(), "Shared")
    save = save_pin(bob["id"], upload["id"], cast["bobs"]["id"])
    save_of_save = save_pin(cid["id"], save["id"], create_board(cid["id"], "Mine")["id"])
    assert files_of(save) == files_of(save_of_save) == files_of(upload)
    assert mapping("pin_image_used_by_pins").count(upload["id"]) == 3

    delete_pin(ann["id"], upload["id"])  # the uploader goes first: the saves still show it
    assert_files(client, upload, present=True)
    delete_pin(bob["id"], save["id"])
    assert_files(client, upload, present=True)
    delete_pin(cid["id"], save_of_save["id"])
    assert_files(client, upload, present=False)
    assert mapping("pin_image_used_by_pins").count(upload["id"]) == 0


def test_two_uploads_of_the_same_bytes_have_files_of_their_own(
    client: Client, cast: dict[str, Any]
) -> None:
    ann, board = cast["ann"], cast["recipes"]["id"]
    first = create_pin(ann["id"], board, image_upload(), "Twin")
    second = create_pin(ann["id"], board, image_upload(), "Twin")
    assert set(files_of(first)).isdisjoint(files_of(second))
    digest = first["image"]["key"].rsplit("/", 1)[1].split("-")[0]
    assert second["image"]["key"].rsplit("/", 1)[1].startswith(digest + "-")  # same content
    delete_pin(ann["id"], first["id"])
    assert_files(client, first, present=False)
    assert_files(client, second, present=True)


def test_deleting_a_board_purges_its_pins(
    client: Client, make_user: Callable[..., dict[str, Any]]
) -> None:
    dee, fan = make_user("dee"), make_user("fan")
    board = create_board(dee["id"], "Short lived")
    pins = [create_pin(dee["id"], board["id"], image_upload(), f"P{n}") for n in range(3)]
    for pin in pins:
        like(fan["id"], pin["id"])
        add_comment(fan["id"], pin["id"], "hi")
    response = Api.as_pinner(client, dee).delete(f"/boards/{board['id']}")
    assert response.status_code == 204
    assert mapping("user_likes_pins").count(fan["id"]) == 0
    for pin in pins:
        assert mapping("pin_liked_by_users").count(pin["id"]) == 0
        assert mapping("pin_has_comments").count(pin["id"]) == 0
        assert_files(client, pin, present=False)


def test_purge_is_idempotent_and_leaves_live_pins_alone(
    client: Client, cast: dict[str, Any]
) -> None:
    ann, bob, pin_id = cast["ann"], cast["bob"], cast["pin"]
    like(bob["id"], pin_id)
    purge_pin(pin_id)  # not deleted: nothing happens
    assert mapping("user_likes_pins").contains(bob["id"], pin_id)
    pin = get_pin(pin_id)
    assert pin is not None
    assert_files(client, pin, present=True)
    delete_pin(ann["id"], pin_id)
    purge_pin(pin_id)  # again, as a retried task would
    assert not mapping("user_likes_pins").contains(bob["id"], pin_id)
    assert_files(client, pin, present=False)


def test_pins_uploaded_before_images_named_their_pin_keep_their_files(
    client: Client, cast: dict[str, Any]
) -> None:
    ann = cast["ann"]
    pin = create_pin(ann["id"], cast["recipes"]["id"], image_upload(), "Old style")
    old_image = {k: v for k, v in pin["image"].items() if k != "source_pin"}
    cached_store().objects("pin").update(pin["id"], {"image": old_image})
    delete_pin(ann["id"], pin["id"])
    assert_files(client, pin, present=True)
