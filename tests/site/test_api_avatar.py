"""The API for avatars: ``PUT /me/avatar`` (multipart, as a pin's upload) and
``DELETE /me/avatar``; every user object carries ``avatar``, its URLs by size, or null."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from pinboard.users.queries import get_user
from tests.site.api_client import Api, error_of
from toolkit.images import image_bytes, image_upload


@pytest.fixture
def ada(client: Client, make_user: Callable[..., dict[str, Any]]) -> Api:
    return Api.as_pinner(client, make_user("ada"))


def keys_of(api: Api) -> list[str]:
    user = get_user(int(api.id))
    assert user is not None
    return list(user.get("avatar", {}).values())


def test_put_sets_the_avatar_and_every_user_object_shows_it(ada: Api, client: Client) -> None:
    response = ada.put_avatar({"image": image_upload("me.png", size=(90, 60))})
    assert response.status_code == 200, response.content
    me = response.json()
    assert me["email"] and me["username"] == ada.user["username"]  # type: ignore[index]
    images = me["avatar"]["images"]
    assert [image["size"] for image in images] == [60, 120]
    assert all(image["url"].startswith("/media/avatars/") for image in images)
    anon = Api(client)
    for path in (f"/users/{ada.id}", f"/users/by-username/{ada.user['username']}"):  # type: ignore[index]
        assert anon.get(path).json()["avatar"] == me["avatar"]
    board = ada.new_board()
    pin = ada.new_pin(board["id"], image_upload())
    ada.post(f"/pins/{pin['id']}/comments", {"text": "mine"})
    comments = anon.get(f"/pins/{pin['id']}/comments").json()["items"]
    assert comments[0]["author"]["avatar"] == me["avatar"]


def test_put_again_replaces_it_and_deletes_the_old_files(ada: Api) -> None:
    first = ada.put_avatar({"image": image_upload()}).json()["avatar"]
    old_keys = keys_of(ada)
    second = ada.put_avatar({"image": image_upload()}).json()["avatar"]
    assert first != second
    assert not any(default_storage.exists(key) for key in old_keys)
    assert all(default_storage.exists(key) for key in keys_of(ada))


def test_delete_removes_it(ada: Api, client: Client) -> None:
    ada.put_avatar({"image": image_upload()})
    keys = keys_of(ada)
    response = ada.delete("/me/avatar")
    assert response.status_code == 204 and response.content == b""
    assert Api(client).get(f"/users/{ada.id}").json()["avatar"] is None
    assert not any(default_storage.exists(key) for key in keys)
    assert ada.delete("/me/avatar").status_code == 204  # none left: still a 204


def test_refusals_change_nothing(ada: Api) -> None:
    ada.put_avatar({"image": image_upload()})
    keys = keys_of(ada)
    not_multipart = ada.call("PUT", "/me/avatar", data=image_bytes(), content_type="image/png")
    assert "multipart/form-data" in error_of(not_multipart, 400)["message"]
    assert error_of(ada.put_avatar({}), 400)["field"] == "image"
    assert error_of(ada.put_avatar({"image": "text"}), 422)["field"] == "image"
    extra = {"image": image_upload(), "caption": "x"}
    assert error_of(ada.put_avatar(extra), 400)["field"] == "caption"
    text_file = SimpleUploadedFile("a.txt", b"not an image", content_type="text/plain")
    error = error_of(ada.put_avatar({"image": text_file}), 422)
    assert error["field"] == "image" and "not a JPEG" in error["message"]
    broken = ada.call(
        "PUT", "/me/avatar", data=b"--x\r\nnot a part", content_type="multipart/form-data"
    )
    assert broken.status_code == 400
    assert keys_of(ada) == keys


def test_a_token_is_needed(client: Client, site_store: Any) -> None:
    anon = Api(client)
    assert error_of(anon.put_avatar({"image": image_upload()}), 401)
    assert error_of(anon.delete("/me/avatar"), 401)
    assert error_of(anon.get("/me/avatar"), 405)


def test_uploads_are_rate_limited_per_pinner(ada: Api, settings: Any) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "avatar": (1, 60)}
    assert ada.put_avatar({"image": image_upload()}).status_code == 200
    response = ada.put_avatar({"image": image_upload()})
    assert error_of(response, 429) and int(response["Retry-After"]) > 0


def test_the_openapi_document_describes_both(client: Client, site_store: Any) -> None:
    document = client.get("/api/v1/openapi.json").json()
    operations = document["paths"]["/api/v1/me/avatar"]
    assert set(operations) == {"put", "delete"}
    put = operations["put"]
    assert "multipart/form-data" in put["requestBody"]["content"]
    assert {"200", "400", "401", "413", "422", "429"} <= set(put["responses"])
    assert set(operations["delete"]["responses"]) >= {"204", "401"}
    schemas = document["components"]["schemas"]
    assert "avatar" in schemas["User"]["required"] and "avatar" in schemas["Me"]["required"]
