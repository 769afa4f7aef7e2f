"""The API for pinners: sign up, tokens, profiles, their lists, and follows."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client

from pinboard.users.tokens import revoke_tokens
from tests.site.api_client import Api, error_of

User = dict[str, Any]
USER_FIELDS = {
    "id",
    "username",
    "display_name",
    "about",
    "follower_count",
    "following_count",
    "board_count",
    "pin_count",
    "like_count",
    "avatar",
}
_n = itertools.count(1)


@pytest.fixture
def anon(client: Client, site_store: Any) -> Api:
    return Api(client)


@pytest.fixture
def pinner(client: Client, make_user: Callable[..., User]) -> Callable[[str], Api]:
    return lambda name="pinner": Api.as_pinner(client, make_user(name))


def fresh(name: str = "api") -> dict[str, str]:
    n = next(_n)
    return {
        "username": f"{name}_{n}_u",
        "email": f"{name}_{n}_u@example.com",
        "password": "correct horse",
    }


# -- sign up and tokens ------------------------------------------------------------


def test_sign_up_returns_the_user_without_secrets(anon: Api) -> None:
    response = anon.post("/users", fresh("signup"))
    assert response.status_code == 201
    user = response.json()
    assert set(user) == USER_FIELDS
    assert isinstance(user["id"], str) and user["id"].isdigit()
    assert user["follower_count"] == user["board_count"] == 0
    assert user["avatar"] is None  # the initial stands in


def test_a_token_opens_me_with_email(anon: Api, client: Client) -> None:
    body = fresh("token")
    anon.post("/users", body)
    response = anon.post("/auth/token", {"username": body["username"], "password": "correct horse"})
    assert response.status_code == 200
    me = Api(client, token=response.json()["token"]).get("/me")
    assert me.status_code == 200
    assert me.json()["username"] == body["username"]
    assert me.json()["email"] == body["email"]
    assert set(me.json()) == USER_FIELDS | {"email"}


def test_a_token_by_email(anon: Api) -> None:
    body = fresh("byemail")
    anon.post("/users", body)
    response = anon.post("/auth/token", {"username": body["email"], "password": body["password"]})
    assert response.status_code == 200 and response.json()["token"]


def test_a_lone_surrogate_in_a_login_is_400_not_500(anon: Api) -> None:
    body = b'{"username": "\\udbfd", "password": "whatever1"}'
    response = anon.post("/auth/token", data=body, content_type="application/json")
    assert error_of(response, 400)["code"] == "bad_request"


def test_wrong_password_is_401(anon: Api) -> None:
    body = fresh("wrongpw")
    anon.post("/users", body)
    response = anon.post("/auth/token", {"username": body["username"], "password": "nope nope"})
    assert error_of(response, 401)["code"] == "unauthenticated"


def test_me_needs_a_valid_token(anon: Api, client: Client, pinner: Callable[[str], Api]) -> None:
    assert error_of(anon.get("/me"), 401)["code"] == "unauthenticated"
    assert error_of(Api(client, token="forged").get("/me"), 401)["code"] == "unauthenticated"
    bad_scheme = anon.call("GET", "/me", headers={"Authorization": "Bearer abc"})
    assert error_of(bad_scheme, 401)["code"] == "unauthenticated"
    ada = pinner("ada")
    assert ada.get("/me").status_code == 200
    revoke_tokens(int(ada.id))
    assert error_of(ada.get("/me"), 401)["code"] == "unauthenticated"


def test_taken_username_or_email_is_409_case_insensitively(anon: Api) -> None:
    body = fresh("taken")
    assert anon.post("/users", body).status_code == 201
    again = {**fresh("other"), "username": body["username"].upper()}
    error = error_of(anon.post("/users", again), 409)
    assert (error["code"], error["field"]) == ("conflict", "username")
    same_email = {**fresh("other"), "email": body["email"].upper()}
    assert error_of(anon.post("/users", same_email), 409)["field"] == "email"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"username": "no spaces allowed"}, "username"),
        ({"username": "api"}, "username"),  # reserved
        ({"username": 42}, "username"),
        ({"email": "not-an-email"}, "email"),
        ({"password": "short"}, "password"),
    ],
)
def test_invalid_sign_up_fields_are_422(anon: Api, change: dict[str, Any], field: str) -> None:
    error = error_of(anon.post("/users", {**fresh("bad"), **change}), 422)
    assert error["code"] == "invalid" and error["field"] == field


def test_sign_up_needs_every_field(anon: Api) -> None:
    body = fresh("missing")
    del body["email"]
    error = error_of(anon.post("/users", body), 400)
    assert error == {"code": "bad_request", "message": "email is required", "field": "email"}


@pytest.fixture
def tight_limits(settings: Any) -> Any:
    settings.RATE_LIMITS = {"login": (2, 60), "signup": (2, 60)}
    caches["ratelimit"].clear()
    yield
    caches["ratelimit"].clear()


@pytest.mark.usefixtures("tight_limits")
def test_sign_up_and_login_are_rate_limited(anon: Api) -> None:
    for _ in range(2):
        assert anon.post("/users", fresh("limited")).status_code == 201
    assert error_of(anon.post("/users", fresh("limited")), 429)["code"] == "rate_limited"
    login = {"username": "whoever", "password": "whatever1"}
    for _ in range(2):
        assert anon.post("/auth/token", login).status_code == 401
    assert error_of(anon.post("/auth/token", login), 429)["code"] == "rate_limited"


# -- reading pinners ---------------------------------------------------------------


def test_user_by_id_and_by_username(anon: Api, pinner: Callable[[str], Api]) -> None:
    ada = pinner("ada")
    ada.new_board("Cats")
    by_id = anon.get(f"/users/{ada.id}")
    assert by_id.status_code == 200
    assert by_id.json()["board_count"] == 1
    assert set(by_id.json()) == USER_FIELDS  # never email or password
    assert ada.user is not None
    by_name = anon.get(f"/users/by-username/{ada.user['username'].upper()}")
    assert by_name.json() == by_id.json()
    assert error_of(anon.get("/users/by-username/nobody_here_at_all"), 404)["code"] == "not_found"


def test_a_users_boards_newest_first(anon: Api, pinner: Callable[[str], Api]) -> None:
    ada = pinner("ada")
    first, second = ada.new_board("One"), ada.new_board("Two")
    response = anon.get(f"/users/{ada.id}/boards")
    assert response.status_code == 200
    assert [b["id"] for b in response.json()["items"]] == [second["id"], first["id"]]
    assert response.json()["next"] is None


def test_follow_a_user_and_the_lists(anon: Api, pinner: Callable[[str], Api]) -> None:
    ada, bob, cy = pinner("ada"), pinner("bob"), pinner("cy")
    assert bob.put(f"/users/{ada.id}/follow").status_code == 204
    assert bob.put(f"/users/{ada.id}/follow").status_code == 204  # idempotent
    assert cy.put(f"/users/{ada.id}/follow").status_code == 204
    assert anon.get(f"/users/{ada.id}").json()["follower_count"] == 2
    assert anon.get(f"/users/{bob.id}").json()["following_count"] == 1
    followers = anon.get(f"/users/{ada.id}/followers").json()
    assert [u["id"] for u in followers["items"]] == [cy.id, bob.id]
    following = anon.get(f"/users/{bob.id}/following").json()
    assert [u["id"] for u in following["items"]] == [ada.id]
    assert set(following["items"][0]) == USER_FIELDS
    assert bob.delete(f"/users/{ada.id}/follow").status_code == 204
    assert anon.get(f"/users/{ada.id}").json()["follower_count"] == 1


def test_following_yourself_is_422(pinner: Callable[[str], Api]) -> None:
    ada = pinner("ada")
    assert error_of(ada.put(f"/users/{ada.id}/follow"), 422)["code"] == "invalid"


def test_follow_needs_a_token_and_a_real_user(anon: Api, pinner: Callable[[str], Api]) -> None:
    ada = pinner("ada")
    assert error_of(anon.put(f"/users/{ada.id}/follow"), 401)["code"] == "unauthenticated"
    assert error_of(anon.delete(f"/users/{ada.id}/follow"), 401)["code"] == "unauthenticated"
    board = ada.new_board()
    assert error_of(ada.put(f"/users/{board['id']}/follow"), 404)["code"] == "not_found"
    assert error_of(ada.delete("/users/12x/follow"), 404)["code"] == "not_found"


def test_follows_among_given_ids(anon: Api, pinner: Callable[[str], Api]) -> None:
    ada, bob, cy, dee = pinner("ada"), pinner("bob"), pinner("cy"), pinner("dee")
    ada.put(f"/users/{bob.id}/follow")
    ada.put(f"/users/{dee.id}/follow")
    response = anon.get(f"/users/{ada.id}/follows", ids=f"{dee.id},{cy.id},{bob.id}")
    assert response.status_code == 200
    assert response.json() == {"ids": [dee.id, bob.id]}
    assert anon.get(f"/users/{ada.id}/follows", ids="").json() == {"ids": []}


def test_follows_among_rejects_bad_lists(anon: Api, pinner: Callable[[str], Api]) -> None:
    ada = pinner("ada")
    board = ada.new_board()
    assert error_of(anon.get(f"/users/{ada.id}/follows"), 400)["field"] == "ids"
    too_many = ",".join([ada.id] * 101)
    assert error_of(anon.get(f"/users/{ada.id}/follows", ids=too_many), 400)["field"] == "ids"
    for bad in ("abc", f"{ada.id},,", board["id"]):
        assert error_of(anon.get(f"/users/{ada.id}/follows", ids=bad), 400)["field"] == "ids"
    assert error_of(anon.get(f"/users/{board['id']}/follows", ids=ada.id), 404)


def test_editing_your_profile(anon: Api, pinner: Callable[[str], Api]) -> None:
    ada = pinner("ada")
    edited = ada.patch("/me", {"display_name": "  Ada L.  ", "about": "Lemons\nand tarts"})
    assert edited.status_code == 200
    assert (edited.json()["display_name"], edited.json()["about"]) == (
        "Ada L.",
        "Lemons\nand tarts",
    )
    assert anon.get(f"/users/{ada.id}").json()["display_name"] == "Ada L."
    assert ada.patch("/me", {"about": ""}).json() | {"display_name": "Ada L.", "about": ""} == (
        ada.get("/me").json()
    )  # only what the body names changes
    for bad in ({"display_name": "x" * 51}, {"display_name": "two\nlines"}, {"about": "x" * 501}):
        assert error_of(ada.patch("/me", bad), 422)["field"] == next(iter(bad))
    assert anon.get(f"/users/{ada.id}").json()["display_name"] == "Ada L."  # nothing changed
    assert error_of(anon.patch("/me", {"about": "hi"}), 401)["code"] == "unauthenticated"
