"""The API for boards: create, read, edit, delete, their pins, follows (seed 004)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from tests.site.api_client import Api, error_of
from toolkit.images import image_upload

BOARD_FIELDS = {
    "id",
    "owner_id",
    "name",
    "slug",
    "description",
    "secret",
    "pin_count",
    "follower_count",
}


@pytest.fixture
def anon(client: Client, site_store: Any) -> Api:
    return Api(client)


@pytest.fixture
def pinner(client: Client, make_user: Callable[..., dict[str, Any]]) -> Callable[[str], Api]:
    return lambda name="pinner": Api.as_pinner(client, make_user(name))


def test_create_and_read_a_board(anon: Api, pinner: Callable[[str], Api]) -> None:
    ada = pinner("ada")
    response = ada.post("/boards", {"name": "Weekend Recipes", "description": "soups"})
    assert response.status_code == 201
    board = response.json()
    assert set(board) == BOARD_FIELDS
    assert board["owner_id"] == ada.id
    assert board["slug"] == "weekend-recipes"
    assert (board["pin_count"], board["follower_count"]) == (0, 0)
    assert anon.get(f"/boards/{board['id']}").json() == board


def test_board_needs_a_token_and_a_name(anon: Api, pinner: Callable[[str], Api]) -> None:
    assert error_of(anon.post("/boards", {"name": "x"}), 401)["code"] == "unauthenticated"
    ada = pinner("ada")
    assert error_of(ada.post("/boards", {"description": "x"}), 400)["field"] == "name"
    assert error_of(ada.post("/boards", {"name": "!!!"}), 422)["field"] == "name"
    assert error_of(ada.post("/boards", {"name": "a" * 101}), 422)["field"] == "name"
    error = error_of(ada.post("/boards", {"name": "ok", "colour": "red"}), 400)
    assert error["field"] == "colour"


def test_only_the_owner_edits_or_deletes(pinner: Callable[[str], Api]) -> None:
    ada, bob = pinner("ada"), pinner("bob")
    board = ada.new_board("Mine")
    assert error_of(bob.patch(f"/boards/{board['id']}", {"name": "Ours"}), 403)["code"] == (
        "forbidden"
    )
    assert error_of(bob.delete(f"/boards/{board['id']}"), 403)["code"] == "forbidden"
    edited = ada.patch(f"/boards/{board['id']}", {"name": "Still Mine", "description": "d"})
    assert edited.status_code == 200
    assert (edited.json()["name"], edited.json()["slug"]) == ("Still Mine", "still-mine")
    assert ada.patch(f"/boards/{board['id']}", {}).json() == edited.json()
    assert ada.delete(f"/boards/{board['id']}").status_code == 204
    assert error_of(ada.get(f"/boards/{board['id']}"), 404)["code"] == "not_found"
    assert error_of(ada.delete(f"/boards/{board['id']}"), 404)["code"] == "not_found"


def test_patch_validates_fields(pinner: Callable[[str], Api]) -> None:
    ada = pinner("ada")
    board = ada.new_board()
    assert error_of(ada.patch(f"/boards/{board['id']}", {"name": ""}), 422)["field"] == "name"
    long = {"description": "x" * 501}
    assert error_of(ada.patch(f"/boards/{board['id']}", long), 422)["field"] == "description"


def test_a_boards_pins_and_counts(anon: Api, pinner: Callable[[str], Api]) -> None:
    ada = pinner("ada")
    board = ada.new_board()
    first = ada.new_pin(board["id"], image_upload())
    second = ada.new_pin(board["id"], image_upload())
    pins = anon.get(f"/boards/{board['id']}/pins").json()
    assert [p["id"] for p in pins["items"]] == [second["id"], first["id"]]
    assert anon.get(f"/boards/{board['id']}").json()["pin_count"] == 2
    assert anon.get(f"/users/{ada.id}").json()["pin_count"] == 2


def test_deleting_a_board_deletes_its_pins(anon: Api, pinner: Callable[[str], Api]) -> None:
    ada = pinner("ada")
    board = ada.new_board()
    pin = ada.new_pin(board["id"], image_upload())
    assert ada.delete(f"/boards/{board['id']}").status_code == 204
    assert error_of(anon.get(f"/pins/{pin['id']}"), 404)["code"] == "not_found"
    assert anon.get(f"/users/{ada.id}").json()["board_count"] == 0


def test_follow_semantics_of_seed_004(anon: Api, pinner: Callable[[str], Api]) -> None:
    """Following a pinner follows their boards; unfollowing one board keeps the others."""
    ada, bob, cy = pinner("ada"), pinner("bob"), pinner("cy")
    cats, dogs = ada.new_board("Cats"), ada.new_board("Dogs")

    def followers(board: dict[str, Any]) -> int:
        return anon.get(f"/boards/{board['id']}").json()["follower_count"]

    assert cy.put(f"/boards/{cats['id']}/follow").status_code == 204  # an explicit board follow
    assert bob.put(f"/users/{ada.id}/follow").status_code == 204  # all of ada's boards
    assert (followers(cats), followers(dogs)) == (2, 1)
    # Bob unfollows one board through its owner: a board unfollow is recorded.
    assert bob.delete(f"/boards/{dogs['id']}/follow").status_code == 204
    assert (followers(cats), followers(dogs)) == (2, 0)
    assert anon.get(f"/users/{bob.id}/follows", ids=ada.id).json() == {"ids": [ada.id]}
    # A board made later is followed through its owner too.
    birds = ada.new_board("Birds")
    assert followers(birds) == 1
    listed = anon.get(f"/users/{ada.id}/boards").json()["items"]
    assert {b["name"]: b["follower_count"] for b in listed} == {"Birds": 1, "Dogs": 0, "Cats": 2}
    assert bob.put(f"/boards/{dogs['id']}/follow").status_code == 204
    assert followers(dogs) == 1


def test_board_follow_errors(anon: Api, pinner: Callable[[str], Api]) -> None:
    ada = pinner("ada")
    board = ada.new_board()
    assert error_of(anon.put(f"/boards/{board['id']}/follow"), 401)["code"] == "unauthenticated"
    assert error_of(ada.put(f"/boards/{board['id']}/follow"), 422)["code"] == "invalid"
    assert error_of(ada.put(f"/boards/{ada.id}/follow"), 404)["code"] == "not_found"
