"""A secret board's pins' images are served only to those who may see the pin: under private
keys, which the public media route refuses, through a view that checks who asks (the
embedded default; on S3, URLs signed for minutes), never cached by others. Making a board
secret moves its pins' files under private keys, and making it public moves them back."""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.core.files.storage import default_storage
from django.test import Client

from pinboard.image_files import read
from pinboard.pins.queries import get_pin
from tests.site.api_client import Api
from tests.site.page_helpers import log_in, text
from toolkit.images import image_upload

pytestmark = pytest.mark.urls("tests.site.media_urls")


@pytest.fixture
def world(client: Client, make_user: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    ann_user, bob_user = make_user("ann"), make_user("bob")
    ann, bob = Api.as_pinner(client, ann_user), Api.as_pinner(client, bob_user)
    diary = ann.post("/boards", {"name": "Diary", "secret": True}).json()
    garden = ann.new_board("Garden")
    return {
        "ann": ann,
        "bob": bob,
        "anon": Api(client),
        "ann_user": ann_user,
        "diary": diary,
        "garden": garden,
        "secret_pin": ann.new_pin(diary["id"], image_upload(size=(600, 400))),
        "public_pin": ann.new_pin(garden["id"], image_upload(size=(600, 400))),
    }


def keys(pin_id: str) -> list[str]:
    pin = get_pin(int(pin_id))
    assert pin is not None
    image = pin["image"]
    return [image[f] for f in ("key", "thumbnail_key", "thumbnail_2x_key") if image.get(f)]


def status(client: Client, url: str) -> int:
    response = client.get(urlsplit(url).path)
    response.close()  # a file served is left open until then
    return int(response.status_code)


def test_a_secret_pins_image_is_served_only_to_who_may_see_it(
    client: Client, world: dict[str, Any]
) -> None:
    ann, pin_id = world["ann"], world["secret_pin"]["id"]
    shown = ann.get(f"/pins/{pin_id}").json()
    assert shown["image_url"].endswith(f"/pin/{pin_id}/image/full/")
    assert all(key.startswith("private/") for key in keys(pin_id))
    for key in keys(pin_id):  # never as public media, whoever asks
        assert status(client, default_storage.url(key)) == 404
    owner = ann.client.get(urlsplit(shown["image_url"]).path, headers=ann.headers())
    assert owner.status_code == 404  # the API's token is not a page's session
    log_in(client, world["ann_user"])
    page = text(client.get(f"/pin/{pin_id}/"))
    assert f"/pin/{pin_id}/image/full/" in page and "/media/private/" not in page
    for variant in ("full", "thumbnail", "thumbnail_2x"):
        response = client.get(f"/pin/{pin_id}/image/{variant}/")
        assert response.status_code == 200 and response["Content-Type"] == "image/jpeg"
        assert response["Cache-Control"].startswith("private")
    client.logout()
    assert client.get(f"/pin/{pin_id}/image/full/").status_code == 404
    assert client.get(f"/pin/{pin_id}/image/other/").status_code == 404


def test_a_private_file_is_no_public_media_under_any_spelling_of_its_path(
    client: Client, world: dict[str, Any]
) -> None:
    key = keys(world["secret_pin"]["id"])[0]
    prefix = urlsplit(default_storage.url(key)).path.removesuffix(key)  # "/media/"
    rest = key.removeprefix("private/")
    spellings = [
        *(f"{dots}/{key}" for dots in (".", "%2e", "%2E", "pins/..", "pins/%2e%2e", "pins/./..")),
        *(f"{head}{key}" for head in ("/", ".//", "pins//../", "pins%2f..%2f", "avatars/x/../../")),
        *(f"private{sep}{rest}" for sep in ("/./", "//", "%2f", "/pins/../")),
        f"{key}/",
        f"{key}/.",
    ]
    assert [status(client, prefix + spelled) for spelled in spellings] == [404] * len(spellings)
    public = keys(world["public_pin"]["id"])[0]
    assert (
        status(client, f"{prefix}./{public}") == 200
    )  # the same spellings of a public file serve it


def test_a_private_file_is_no_public_media_in_any_case_of_its_folder(
    client: Client, world: dict[str, Any], settings: Any
) -> None:
    """On a disk that ignores case (macOS's, Windows'), ``PRIVATE/...`` is the private file:
    a copy under that name stands in for such a disk here."""
    key = keys(world["secret_pin"]["id"])[0]
    rest = key.removeprefix("private/")
    for folder in ("PRIVATE", "Private", "privatE"):
        copy = Path(settings.MEDIA_ROOT, folder, rest)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(read(key))
        try:
            assert status(client, f"/media/{folder}/{rest}") == 404, folder
            assert status(client, f"/media/./{folder}/{rest}") == 404, folder
        finally:
            shutil.rmtree(Path(settings.MEDIA_ROOT, folder))


def test_a_private_files_name_owes_nothing_to_its_content(world: dict[str, Any]) -> None:
    """Whoever holds the picture can hash it: a private name must be unguessable alone."""
    digest = hashlib.sha256(read(keys(world["secret_pin"]["id"])[0])).hexdigest()
    for key in keys(world["secret_pin"]["id"]):
        name = key.rsplit("/", 1)[-1]
        assert digest not in key and re.fullmatch(r"[0-9a-f]{32}(_\w+)?\.jpg", name), key


def test_a_public_pins_image_stays_public_media(client: Client, world: dict[str, Any]) -> None:
    shown = world["anon"].get(f"/pins/{world['public_pin']['id']}").json()
    assert "/media/pins/" in shown["image_url"] and status(client, shown["image_url"]) == 200


def test_a_board_made_secret_moves_its_images_and_back(
    client: Client, world: dict[str, Any]
) -> None:
    ann, anon, garden = world["ann"], world["anon"], world["garden"]
    pin_id = world["public_pin"]["id"]
    public_url = anon.get(f"/pins/{pin_id}").json()["image_url"]
    old_keys = keys(pin_id)
    assert ann.patch(f"/boards/{garden['id']}", {"secret": True}).status_code == 200
    assert all(key.startswith("private/") for key in keys(pin_id))
    assert status(client, public_url) == 404  # the old public file is gone
    assert not any(default_storage.exists(key) for key in old_keys)
    log_in(client, world["ann_user"])
    assert client.get(f"/pin/{pin_id}/image/full/").status_code == 200
    assert ann.patch(f"/boards/{garden['id']}", {"secret": False}).status_code == 200
    shown = anon.get(f"/pins/{pin_id}").json()["image_url"]
    assert "/media/pins/" in shown and status(client, shown) == 200
    assert not any(key.startswith("private/") for key in keys(pin_id))
