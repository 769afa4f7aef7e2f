"""Pin pages: what a pin page shows, create and edit pins, save, like, comment."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from pinboard.boards.actions import create_board
from pinboard.image_files import MAX_BYTES
from pinboard.likes.actions import like
from pinboard.pins.actions import add_comment, save_pin
from pinboard.pins.queries import board_pins_page, get_pin
from tests.site.page_helpers import board_url, log_in, text
from toolkit.images import image_upload


def test_pin_page_shows_everything(client, cast, make_user):
    ann, bob, pin = cast["ann"], cast["bob"], cast["pin"]
    like(bob["id"], pin)
    add_comment(bob["id"], pin, "Looks great")
    save_pin(bob["id"], pin, cast["bobs"]["id"])
    page = text(client.get(f"/pin/{pin}/"))
    assert "<strong>1</strong> like</span>" in page
    assert "<strong>1</strong> save</span>" in page
    assert "<strong>1</strong> comment</span>" in page
    assert "Looks great" in page and bob["username"] in page
    assert board_url(ann, cast["recipes"]) in page and f'href="/{ann["username"]}/"' in page
    assert "/media/pins/" in page


def test_pin_link_is_nofollow(client, cast):
    ann = cast["ann"]
    log_in(client, ann)
    form = {
        "board": cast["recipes"]["id"],
        "image": image_upload(),
        "description": "Linked",
        "link": "https://example.com/recipe",
    }
    response = client.post("/pin/new/", form)
    assert response.status_code == 302
    page = text(client.get(response["Location"]))
    assert 'href="https://example.com/recipe" rel="nofollow noopener"' in page


def test_create_pin_happy_path(client, cast):
    ann = cast["ann"]
    log_in(client, ann)
    page = text(client.get(f"/pin/new/?board={cast['recipes']['id']}"))
    assert f'value="{cast["recipes"]["id"]}" selected' in page
    form = {"board": cast["recipes"]["id"], "image": image_upload(), "description": "Soup"}
    response = client.post("/pin/new/", form)
    pin_id = int(response["Location"].split("/")[2])
    assert get_pin(pin_id)["description"] == "Soup"
    assert "3 pins" in text(client.get(f"/{ann['username']}/"))
    assert f'href="/pin/{pin_id}/"' in text(client.get("/"))  # in the pinner's own feed


@pytest.mark.parametrize(
    ("make_form", "status", "field", "message"),
    [
        (lambda c: {"board": c["recipes"]["id"]}, 422, "image", "an image file is required"),
        (
            lambda c: {
                "board": c["recipes"]["id"],
                "image": SimpleUploadedFile("x.png", b"not an image at all"),
            },
            422,
            "image",
            "not a JPEG, PNG, GIF or WebP",
        ),
        (
            lambda c: {
                "board": c["recipes"]["id"],
                "image": SimpleUploadedFile("big.png", b"\0" * (MAX_BYTES + 1)),
            },
            413,
            "image",
            "at most 10 MB",
        ),
        (lambda c: {"board": "abc", "image": image_upload()}, 404, "board", "choose one"),
        (lambda c: {"board": c["bobs"]["id"], "image": image_upload()}, 403, "board", "choose one"),
        (
            lambda c: {"board": c["recipes"]["id"], "image": image_upload(), "link": "ftp://x"},
            422,
            "link",
            "http(s) URL",
        ),
    ],
)
def test_create_pin_errors_are_shown_on_the_form(client, cast, make_form, status, field, message):
    log_in(client, cast["ann"])
    response = client.post("/pin/new/", make_form(cast))
    assert response.status_code == status
    page = text(response)
    assert 'enctype="multipart/form-data"' in page and message in page
    assert len(board_pins_page(cast["recipes"]["id"]).ids) == 2


def test_create_pin_without_boards_asks_for_one(client, make_user):
    log_in(client, make_user("new"))
    assert "First, a board" in text(client.get("/pin/new/"))


def test_edit_and_delete_pin_owner_only(client, cast):
    ann, bob, pin = cast["ann"], cast["bob"], cast["pin"]
    log_in(client, bob)
    assert client.get(f"/pin/{pin}/edit/").status_code == 403
    assert client.post(f"/pin/{pin}/edit/", {"description": "mine"}).status_code == 403
    assert client.post(f"/pin/{pin}/delete/").status_code == 403
    log_in(client, ann)
    other = create_board(ann["id"], "Other")
    response = client.post(f"/pin/{pin}/edit/", {"description": "x", "link": "not a url"})
    assert response.status_code == 422 and "http(s) URL" in text(response)
    form = {"description": "Edited", "link": "", "board": other["id"]}
    assert client.post(f"/pin/{pin}/edit/", form)["Location"] == f"/pin/{pin}/"
    assert get_pin(pin)["description"] == "Edited" and get_pin(pin)["board_id"] == other["id"]
    response = client.post(f"/pin/{pin}/delete/")
    assert response["Location"] == f"/{ann['username']}/"
    assert client.get(f"/pin/{pin}/").status_code == 404


def test_save_to_board(client, cast):
    bob, pin = cast["bob"], cast["pin"]
    log_in(client, bob)
    page = text(client.get(f"/pin/{pin}/"))
    assert f'<option value="{cast["bobs"]["id"]}">Bob things</option>' in page
    response = client.post(f"/pin/{pin}/save/", {"board": cast["bobs"]["id"]}, follow=True)
    assert "See your pin" in text(response)
    assert "<strong>1</strong> save</span>" in text(response)
    copy = board_pins_page(cast["bobs"]["id"]).ids[0]
    assert f'Saved from <a href="/pin/{pin}/">' in text(client.get(f"/pin/{copy}/"))
    for board, why in (
        ("garbage", "choose one of your boards"),  # not a board
        (cast["recipes"]["id"], "you can pin only to your boards"),  # not bob's
    ):
        response = client.post(f"/pin/{pin}/save/", {"board": board}, follow=True)
        assert response.status_code == 200 and why in text(response)
    assert client.post("/pin/abc/save/", {"board": cast["bobs"]["id"]}).status_code == 404


def test_like_and_unlike(client, cast):
    pin = cast["pin"]
    log_in(client, cast["bob"])
    assert client.post(f"/pin/{pin}/like/")["Location"] == f"/pin/{pin}/"
    page = text(client.get(f"/pin/{pin}/"))
    assert "♥ Liked" in page and "<strong>1</strong> like</span>" in page
    client.post(f"/pin/{pin}/unlike/")
    page = text(client.get(f"/pin/{pin}/"))
    assert "♡ Like" in page and "<strong>0</strong> likes</span>" in page


def test_comment(client, cast):
    pin = cast["pin"]
    log_in(client, cast["bob"])
    response = client.post(f"/pin/{pin}/comment/", {"text": "Yum"})
    assert response["Location"] == f"/pin/{pin}/#comments"
    page = text(client.get(f"/pin/{pin}/"))
    assert "Yum" in page and "<strong>1</strong> comment</span>" in page
    response = client.post(f"/pin/{pin}/comment/", {"text": "   "}, follow=True)
    assert "comment must be" in text(response)


def test_a_comment_is_deleted_by_its_author_or_the_pins_owner_only(client, cast, make_user):
    ann, bob, pin = cast["ann"], cast["bob"], cast["pin"]
    cy = make_user("cy")
    by_bob = add_comment(bob["id"], pin, "Bob was here")
    by_cy = add_comment(cy["id"], pin, "Cy was here")
    delete = f"/pin/{pin}/comments/{{}}/delete/"

    log_in(client, bob)  # sees a delete button on his own comment only
    page = text(client.get(f"/pin/{pin}/"))
    assert delete.format(by_bob["id"]) in page and delete.format(by_cy["id"]) not in page
    assert client.post(delete.format(by_cy["id"])).status_code == 403
    response = client.post(delete.format(by_bob["id"]))
    assert response["Location"] == f"/pin/{pin}/#comments"
    page = text(client.get(f"/pin/{pin}/"))
    assert "Bob was here" not in page and "<strong>1</strong> comment</span>" in page

    log_in(client, ann)  # the pin's owner may delete any comment on it
    assert delete.format(by_cy["id"]) in text(client.get(f"/pin/{pin}/"))
    client.post(delete.format(by_cy["id"]))
    assert "No comments yet" in text(client.get(f"/pin/{pin}/"))
    assert client.post(delete.format(by_cy["id"])).status_code == 404  # gone already
    other = board_pins_page(cast["recipes"]["id"]).ids[1]
    elsewhere = add_comment(bob["id"], other, "Not on this pin")
    assert client.post(delete.format(elsewhere["id"])).status_code == 404  # wrong pin
