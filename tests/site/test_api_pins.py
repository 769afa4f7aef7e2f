"""The API for pins: upload, read, edit, delete, save, likes and comments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from tests.site.api_client import Api, error_of
from toolkit.images import image_upload

PIN_FIELDS = {
    "id",
    "board_id",
    "owner_id",
    "description",
    "link",
    "image_url",
    "thumbnail_url",
    "width",
    "height",
    "like_count",
    "save_count",
    "comment_count",
    "saved_from",
    "created_at",
}


@pytest.fixture
def anon(client: Client, site_store: Any) -> Api:
    return Api(client)


@pytest.fixture
def pinner(client: Client, make_user: Callable[..., dict[str, Any]]) -> Callable[[str], Api]:
    return lambda name="pinner": Api.as_pinner(client, make_user(name))


@pytest.fixture
def ada(pinner: Callable[[str], Api]) -> Api:
    return pinner("ada")


@pytest.fixture
def board(ada: Api) -> dict[str, Any]:
    return ada.new_board("Pins")


@pytest.fixture
def pin(ada: Api, board: dict[str, Any]) -> dict[str, Any]:
    return ada.new_pin(board["id"], image_upload(), description="red", link="https://example.com/")


def test_upload_a_pin(anon: Api, ada: Api, board: dict[str, Any]) -> None:
    response = ada.upload(
        {
            "board_id": board["id"],
            "image": image_upload("x.webp", size=(500, 300), fmt="WEBP"),
            "description": "  a red square ",
            "link": "https://example.com/a",
        }
    )
    assert response.status_code == 201, response.content
    pin = response.json()
    assert set(pin) == PIN_FIELDS
    assert (pin["board_id"], pin["owner_id"]) == (board["id"], ada.id)
    assert pin["description"] == "a red square"
    assert pin["image_url"].endswith(".jpg") and pin["thumbnail_url"].endswith("_236.jpg")
    assert (pin["width"], pin["height"]) == (500, 300)
    assert pin["saved_from"] is None
    assert (pin["like_count"], pin["save_count"], pin["comment_count"]) == (0, 0, 0)
    assert anon.get(f"/pins/{pin['id']}").json() == pin


def test_upload_errors(anon: Api, ada: Api, pinner: Callable[[str], Api], board: Any) -> None:
    fields = {"board_id": board["id"], "image": image_upload()}
    assert error_of(anon.upload(fields), 401)["code"] == "unauthenticated"
    as_json = ada.post("/pins", {"board_id": board["id"]})
    assert error_of(as_json, 400)["code"] == "bad_request"
    assert error_of(ada.upload({"image": image_upload()}), 400)["field"] == "board_id"
    assert error_of(ada.upload({"board_id": board["id"]}), 400)["field"] == "image"
    not_image = SimpleUploadedFile("evil.png", b"GIF89a not really", content_type="image/png")
    error = error_of(ada.upload({"board_id": board["id"], "image": not_image}), 422)
    assert (error["code"], error["field"]) == ("invalid", "image")
    bad_link = {**fields, "image": image_upload(), "link": "javascript:alert(1)"}
    assert error_of(ada.upload(bad_link), 422)["field"] == "link"
    bob = pinner("bob")
    assert error_of(bob.upload({**fields, "image": image_upload()}), 403)["code"] == "forbidden"
    wrong_type = {"board_id": ada.id, "image": image_upload()}
    assert error_of(ada.upload(wrong_type), 404)["field"] == "board_id"


def test_an_image_over_10_mb_is_413(ada: Api, board: dict[str, Any]) -> None:
    huge = SimpleUploadedFile("big.png", b"\x89PNG" + b"\0" * (10 * 1024 * 1024))
    error = error_of(ada.upload({"board_id": board["id"], "image": huge}), 413)
    assert error["code"] == "too_large"


def test_a_body_over_the_limit_is_413(ada: Api, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = ada.post("/boards", {"name": "big", "description": "x" * 2000})
    assert error_of(response, 413)["code"] == "too_large"


def test_edit_move_and_delete_only_your_pin(
    anon: Api, ada: Api, pinner: Callable[[str], Api], pin: dict[str, Any]
) -> None:
    bob = pinner("bob")
    assert error_of(bob.patch(f"/pins/{pin['id']}", {"description": "mine"}), 403)
    assert error_of(bob.delete(f"/pins/{pin['id']}"), 403)["code"] == "forbidden"
    other_board = ada.new_board("Elsewhere")
    edited = ada.patch(
        f"/pins/{pin['id']}",
        {"description": "blue", "link": "", "board_id": other_board["id"]},
    )
    assert edited.status_code == 200, edited.content
    assert (edited.json()["description"], edited.json()["link"]) == ("blue", "")
    assert edited.json()["board_id"] == other_board["id"]
    moved = anon.get(f"/boards/{other_board['id']}/pins").json()["items"]
    assert [p["id"] for p in moved] == [pin["id"]]
    assert anon.get(f"/boards/{pin['board_id']}/pins").json()["items"] == []
    bobs_board = bob.new_board()
    into_bobs = ada.patch(f"/pins/{pin['id']}", {"board_id": bobs_board["id"]})
    assert error_of(into_bobs, 403)["code"] == "forbidden"
    as_number = ada.patch(f"/pins/{pin['id']}", {"board_id": int(other_board["id"])})
    assert error_of(as_number, 422)["field"] == "board_id"
    assert error_of(ada.patch(f"/pins/{pin['id']}", {"link": "ftp://x"}), 422)["field"] == "link"
    assert ada.delete(f"/pins/{pin['id']}").status_code == 204
    assert error_of(anon.get(f"/pins/{pin['id']}"), 404)["code"] == "not_found"


def test_save_a_pin_to_your_board(anon: Api, pinner: Callable[[str], Api], pin: Any) -> None:
    bob = pinner("bob")
    bobs_board = bob.new_board("Saved")
    response = bob.post(f"/pins/{pin['id']}/save", {"board_id": bobs_board["id"]})
    assert response.status_code == 201, response.content
    saved = response.json()
    assert saved["saved_from"] == pin["id"]
    assert (saved["owner_id"], saved["board_id"]) == (bob.id, bobs_board["id"])
    assert (saved["description"], saved["image_url"]) == (pin["description"], pin["image_url"])
    assert anon.get(f"/pins/{pin['id']}").json()["save_count"] == 1
    into_theirs = bob.post(f"/pins/{pin['id']}/save", {"board_id": pin["board_id"]})
    assert error_of(into_theirs, 403)["code"] == "forbidden"
    assert error_of(bob.post(f"/pins/{pin['id']}/save", {}), 400)["field"] == "board_id"
    assert error_of(anon.post(f"/pins/{pin['id']}/save", {"board_id": "1"}), 401)


def test_likes(anon: Api, pinner: Callable[[str], Api], pin: dict[str, Any]) -> None:
    bob, cy = pinner("bob"), pinner("cy")
    for who in (bob, bob, cy):
        assert who.put(f"/pins/{pin['id']}/like").status_code == 204
    assert anon.get(f"/pins/{pin['id']}").json()["like_count"] == 2
    likers = anon.get(f"/pins/{pin['id']}/likes").json()
    assert [u["id"] for u in likers["items"]] == [cy.id, bob.id]
    assert bob.delete(f"/pins/{pin['id']}/like").status_code == 204
    assert anon.get(f"/pins/{pin['id']}").json()["like_count"] == 1
    assert error_of(anon.put(f"/pins/{pin['id']}/like"), 401)["code"] == "unauthenticated"
    assert error_of(bob.put(f"/pins/{pin['board_id']}/like"), 404)["code"] == "not_found"


def test_a_pinners_likes_latest_first(anon: Api, ada: Api, pinner: Callable[[str], Api]) -> None:
    bob = pinner("bob")
    board = ada.new_board("Likeable")
    first, second = (ada.new_pin(board["id"], image_upload()) for _ in range(2))
    for liked in (first, second):
        assert bob.put(f"/pins/{liked['id']}/like").status_code == 204
    assert anon.get(f"/users/{bob.id}").json()["like_count"] == 2
    likes = anon.get(f"/users/{bob.id}/likes", limit=1).json()
    assert [p["id"] for p in likes["items"]] == [second["id"]]
    rest = anon.get(f"/users/{bob.id}/likes", limit=1, cursor=likes["next"]).json()
    assert [p["id"] for p in rest["items"]] == [first["id"]]
    assert bob.delete(f"/pins/{second['id']}/like").status_code == 204
    assert [p["id"] for p in anon.get(f"/users/{bob.id}/likes").json()["items"]] == [first["id"]]
    assert error_of(anon.get(f"/users/{board['id']}/likes"), 404)["code"] == "not_found"


def test_comments(anon: Api, ada: Api, pinner: Callable[[str], Api], pin: Any) -> None:
    bob = pinner("bob")
    response = bob.post(f"/pins/{pin['id']}/comments", {"text": " lovely "})
    assert response.status_code == 201
    comment = response.json()
    assert set(comment) == {"id", "pin_id", "author", "text", "created_at"}
    assert (comment["pin_id"], comment["text"], comment["author"]["id"]) == (
        pin["id"],
        "lovely",
        bob.id,
    )
    ada.post(f"/pins/{pin['id']}/comments", {"text": "thanks"})
    listed = anon.get(f"/pins/{pin['id']}/comments").json()
    assert [(c["author"]["username"], c["text"]) for c in listed["items"]] == [
        (bob.user["username"], "lovely"),  # type: ignore[index]
        (ada.user["username"], "thanks"),  # type: ignore[index]
    ]
    assert "follower_count" in listed["items"][0]["author"]
    assert anon.get(f"/pins/{pin['id']}").json()["comment_count"] == 2
    assert error_of(bob.post(f"/pins/{pin['id']}/comments", {"text": "  "}), 422)["field"] == (
        "text"
    )
    assert error_of(anon.post(f"/pins/{pin['id']}/comments", {"text": "hi"}), 401)
    assert error_of(bob.post(f"/pins/{ada.id}/comments", {"text": "hi"}), 404)


def test_deleting_comments(anon: Api, ada: Api, pinner: Callable[[str], Api], pin: Any) -> None:
    bob, cy = pinner("bob"), pinner("cy")
    by_bob = bob.post(f"/pins/{pin['id']}/comments", {"text": "bob"}).json()
    by_cy = cy.post(f"/pins/{pin['id']}/comments", {"text": "cy"}).json()
    comment = f"/pins/{pin['id']}/comments/{{}}"
    assert error_of(anon.delete(comment.format(by_bob["id"])), 401)["code"] == "unauthenticated"
    assert error_of(bob.delete(comment.format(by_cy["id"])), 403)["code"] == "forbidden"
    assert bob.delete(comment.format(by_bob["id"])).status_code == 204
    assert ada.delete(comment.format(by_cy["id"])).status_code == 204  # the pin's owner
    assert anon.get(f"/pins/{pin['id']}/comments").json()["items"] == []
    assert anon.get(f"/pins/{pin['id']}").json()["comment_count"] == 0
    assert error_of(ada.delete(comment.format(by_cy["id"])), 404)["code"] == "not_found"
    assert error_of(ada.delete(comment.format("abc")), 404)["code"] == "not_found"
    assert error_of(ada.delete(f"/pins/{by_bob['id']}/comments/{pin['id']}"), 404)["code"] == "not_found"  # fmt: skip
