"""Avatars on the pages: uploaded on the settings page, checked as pin images are, stored as
a square at 60 and 120 px, shown wherever a pinner is named (profile head, people lists,
the top bar, a pin's byline; pin cards: test_pin_cards.py); replaced or removed, their
files go."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from PIL import Image

from pinboard.follows.actions import follow_user
from pinboard.image_files import MAX_BYTES, image_url
from pinboard.pins.queries import board_pins_page
from pinboard.users.actions import delete_account, remove_avatar, set_avatar
from pinboard.users.queries import get_user
from tests.site.page_helpers import board_with_pins, log_in, text
from tests.site.test_image_limits import declared_png
from toolkit.images import image_upload

User = dict[str, Any]


def striped(width: int = 300, height: int = 100) -> SimpleUploadedFile:
    """A wide PNG: red on the left, green in the centre square, blue on the right."""
    image = Image.new("RGB", (width, height), (0, 200, 0))
    image.paste((220, 0, 0), (0, 0, (width - height) // 2, height))
    image.paste((0, 0, 220), ((width + height) // 2, 0, width, height))
    out = io.BytesIO()
    image.save(out, "PNG")
    return SimpleUploadedFile("me.png", out.getvalue(), content_type="image/png")


def stored(key: str) -> Image.Image:
    with default_storage.open(key) as file:
        image = Image.open(io.BytesIO(file.read()))
        image.load()
    return image


def small(user: User) -> str:
    return image_url(user["avatar"]["60"])


@pytest.fixture
def ann(client: Client, make_user: Callable[..., User]) -> User:
    user = make_user("ann")
    log_in(client, user)
    return user


def test_the_settings_page_stores_the_centre_square_at_two_sizes(client: Client, ann: User) -> None:
    page = text(client.get("/settings/"))
    assert 'enctype="multipart/form-data"' in page and 'name="image"' in page
    assert "Remove picture" not in page  # nothing to remove yet
    response = client.post("/settings/avatar/", {"image": striped()})
    assert response.status_code == 302 and response["Location"] == "/settings/"
    avatar = get_user(ann["id"])["avatar"]  # type: ignore[index]
    assert sorted(avatar) == ["120", "60"]
    for size in (60, 120):
        key = avatar[str(size)]
        assert key.startswith("avatars/") and key.endswith(f"_{size}.jpg")
        picture = stored(key)
        assert picture.format == "JPEG" and picture.size == (size, size)
        red, green, blue = picture.getpixel((size // 2, size // 2))
        assert green > 150 and red < 60 and blue < 60  # the centre, not a squeezed whole
        for corner in ((1, 1), (size - 2, 1)):  # and no stripe at its edges
            assert picture.getpixel(corner)[1] > 150
    page = text(client.get("/settings/"))
    assert "Your picture is saved." in page and "Remove picture" in page
    assert image_url(avatar["120"]) in page


def test_the_avatar_shows_wherever_the_pinner_is_named(
    client: Client, ann: User, make_user: Callable[..., User]
) -> None:
    pin_id = board_pins_page(board_with_pins(ann, "Garden", 1)["id"]).ids[0]
    fan = make_user("fan")
    follow_user(fan["id"], ann["id"])
    ann = set_avatar(ann["id"], image_upload("me.png", size=(80, 80)))
    url = small(ann)
    profile = text(client.get(f"/{ann['username']}/"))
    assert f'<img src="{image_url(ann["avatar"]["120"])}" alt="" width="120"' in profile
    assert url in profile  # the top bar: she is signed in
    followers = text(Client().get(f"/{ann['username']}/followers/"))
    assert f">{fan['username'][0].upper()}</a>" in followers  # fan's initial, no request
    following = text(Client().get(f"/{fan['username']}/following/"))
    assert url in following
    assert url in text(Client().get(f"/pin/{pin_id}/"))


def test_without_an_avatar_a_pinner_is_shown_their_initial(client: Client, ann: User) -> None:
    initial = ann["username"][0].upper()
    profile = text(client.get(f"/{ann['username']}/"))
    assert f'<div class="avatar big" aria-hidden="true">{initial}</div>' in profile
    assert f'title="{ann["username"]}">{initial}</a>' in profile  # the top bar's


def avatar_files() -> set[str]:
    def walk(folder: str) -> set[str]:
        if not default_storage.exists(folder):
            return set()
        folders, files = default_storage.listdir(folder)
        found = {f"{folder}/{name}" for name in files}
        for name in folders:
            found |= walk(f"{folder}/{name}")
        return found

    return walk("avatars")


def test_replacing_or_removing_an_avatar_deletes_its_files(client: Client, ann: User) -> None:
    first = set_avatar(ann["id"], image_upload("a.png"))["avatar"]
    second = set_avatar(ann["id"], image_upload("a.png"))["avatar"]  # the same bytes
    assert set(first.values()).isdisjoint(second.values())  # files of its own
    assert not any(default_storage.exists(key) for key in first.values())
    assert all(default_storage.exists(key) for key in second.values())
    response = client.post("/settings/avatar/remove/")
    assert response.status_code == 302 and response["Location"] == "/settings/"
    assert "avatar" not in get_user(ann["id"])  # type: ignore[operator]
    assert not any(default_storage.exists(key) for key in second.values())
    assert "your initial shows instead" in text(client.get("/settings/"))
    assert remove_avatar(ann["id"])["id"] == ann["id"]  # none to remove: no error
    assert client.get("/settings/avatar/remove/").status_code == 405  # a button's POST only


@pytest.mark.parametrize(
    ("upload", "status", "message"),
    [
        (None, 422, "an image file is required"),
        (SimpleUploadedFile("a.txt", b"hello", content_type="text/plain"), 422, "not a JPEG"),
        (SimpleUploadedFile("b.png", declared_png(6000, 6000)), 422, "megapixels"),
        (SimpleUploadedFile("c.png", b"\0" * (MAX_BYTES + 1)), 413, "at most 10 MB"),
    ],
)
def test_a_refused_upload_changes_nothing_and_says_why(
    client: Client, ann: User, upload: Any, status: int, message: str
) -> None:
    set_avatar(ann["id"], image_upload())
    before, files = get_user(ann["id"]), avatar_files()
    response = client.post("/settings/avatar/", {"image": upload} if upload else {})
    assert response.status_code == status and message in text(response)
    assert 'role="alert"' in text(response) and 'name="display_name"' in text(response)
    assert get_user(ann["id"]) == before and avatar_files() == files


def test_avatar_uploads_are_rate_limited(client: Client, ann: User, settings: Any) -> None:
    from pinboard.settings import base

    count, period = base.RATE_LIMITS["avatar"]
    assert 0 < count <= 60 and period == 60  # on by default
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "avatar": (1, 60)}
    assert client.post("/settings/avatar/", {"image": image_upload()}).status_code == 302
    response = client.post("/settings/avatar/", {"image": image_upload()})
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert "too many avatar attempts" in text(response)


def test_the_avatar_pages_need_a_pinner(client: Client, site_store: Any) -> None:
    for url in ("/settings/avatar/", "/settings/avatar/remove/"):
        response = client.post(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_a_deleted_accounts_avatar_files_are_purged(make_user: Callable[..., User]) -> None:
    gone = make_user("gone")
    avatar = set_avatar(gone["id"], image_upload())["avatar"]
    delete_account(gone["id"], "plum-orchard-42")  # the purge runs at once here (eager)
    assert not any(default_storage.exists(key) for key in avatar.values())
