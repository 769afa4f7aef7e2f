"""Sessions end at log-out and at a password change; API tokens are stored hashed, expire,
and are revoked one at a time (DELETE /api/v1/auth/token) or all at a password change."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from django.conf import settings
from django.contrib.sessions.backends.cache import KEY_PREFIX
from django.core.cache import caches
from django.test import Client

from pinboard.api.openapi import build
from pinboard.catalog import CATALOG
from pinboard.users.actions import authenticate
from shardstore import compose, decompose
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import log_in, text

User = dict[str, Any]
PASSWORD = "plum-orchard-42"  # make_user's
NEW_PASSWORD = "violet-canyon-77"


def signed_in(client: Client) -> bool:
    return "Log out" in text(client.get("/"))


def with_cookie_of(client: Client) -> Client:
    """A second browser holding a copy of ``client``'s session cookie."""
    copy = Client()
    copy.cookies[settings.SESSION_COOKIE_NAME] = client.cookies[settings.SESSION_COOKIE_NAME].value
    return copy


# -- sessions ----------------------------------------------------------------------


def test_sessions_live_on_the_server(client: Client, make_user: Callable[..., User]) -> None:
    log_in(client, make_user("ann"))
    session_key = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert caches[settings.SESSION_CACHE_ALIAS].get(KEY_PREFIX + session_key)


def test_a_copied_session_cookie_is_dead_after_log_out(
    client: Client, make_user: Callable[..., User]
) -> None:
    log_in(client, make_user("ann"))
    stolen = with_cookie_of(client)
    assert signed_in(stolen)
    assert client.post("/logout/").status_code == 302
    assert not signed_in(client)
    assert not signed_in(stolen)


def test_a_password_change_ends_the_other_sessions_and_keeps_this_one(
    client: Client, make_user: Callable[..., User]
) -> None:
    ann = make_user("ann")
    log_in(client, ann)
    other_browser = Client()
    log_in(other_browser, ann)
    stolen = with_cookie_of(client)  # a copy of the session that changes the password
    form = {"old_password": PASSWORD, "new_password": NEW_PASSWORD}
    response = client.post("/settings/password/", form)
    assert response.status_code == 302 and response["Location"] == f"/{ann['username']}/"
    assert signed_in(client)
    assert not signed_in(other_browser)
    assert not signed_in(stolen)  # the kept session has a new key too
    assert authenticate(ann["username"], NEW_PASSWORD) is not None
    assert authenticate(ann["username"], PASSWORD) is None


def test_the_password_page_refuses_a_wrong_or_weak_password(
    client: Client, make_user: Callable[..., User]
) -> None:
    ann = make_user("ann")
    log_in(client, ann)
    assert 'name="old_password"' in text(client.get("/settings/password/"))
    wrong = client.post("/settings/password/", {"old_password": "nope", "new_password": "x"})
    assert wrong.status_code == 422 and "the current password is wrong" in text(wrong)
    weak = client.post(
        "/settings/password/", {"old_password": PASSWORD, "new_password": "password123"}
    )
    assert weak.status_code == 422 and "too common" in text(weak)
    assert signed_in(client) and authenticate(ann["username"], PASSWORD) is not None


def test_the_password_page_needs_a_pinner(client: Client, site_store: Any) -> None:
    response = client.get("/settings/password/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_log_in_rotates_the_csrf_token(make_user: Callable[..., User]) -> None:
    client = Client(enforce_csrf_checks=True)
    page = text(client.get("/login/"))
    planted = client.cookies[settings.CSRF_COOKIE_NAME].value
    token = page.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    ann = make_user("ann")
    form = {"login": ann["username"], "password": PASSWORD, "csrfmiddlewaretoken": token}
    assert client.post("/login/", form).status_code == 302
    assert client.cookies[settings.CSRF_COOKIE_NAME].value != planted


# -- API tokens --------------------------------------------------------------------


@pytest.fixture
def anon(client: Client, site_store: Any) -> Api:
    return Api(client)


def token_for(anon: Api, user: User, password: str = PASSWORD) -> dict[str, str]:
    response = anon.post("/auth/token", {"username": user["username"], "password": password})
    assert response.status_code == 200, response.content
    return response.json()


def as_token(client: Client, token: str) -> Api:
    return Api(client, token=token)


def test_a_token_is_stored_as_a_hash_with_an_expiry(
    anon: Api, site_store: Any, make_user: Callable[..., User]
) -> None:
    ann = make_user("ann")
    issued = token_for(anon, ann)
    raw_id, secret = issued["token"].split(".")
    stored = site_store.objects("token").get(int(raw_id))
    assert stored["user_id"] == str(ann["id"])
    assert stored["hash"] == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in str(stored)
    assert decompose(int(raw_id)).shard_id == decompose(ann["id"]).shard_id  # on ann's shard
    lifetime = datetime.fromisoformat(stored["expires_at"]) - datetime.fromisoformat(
        stored["created_at"]
    )
    assert lifetime.total_seconds() == settings.API_TOKEN_SECONDS == 30 * 24 * 3600
    assert issued["expires_at"] == stored["expires_at"]
    assert site_store.mapping("user_has_tokens").page(ann["id"]).ids == [int(raw_id)]


def test_an_expired_token_is_refused(
    anon: Api, client: Client, make_user: Callable[..., User], settings: Any
) -> None:
    ann = make_user("ann")
    settings.API_TOKEN_SECONDS = 0
    expired = token_for(anon, ann)["token"]
    settings.API_TOKEN_SECONDS = 3600
    live = token_for(anon, ann)["token"]
    assert error_of(as_token(client, expired).get("/me"), 401)["code"] == "unauthenticated"
    assert as_token(client, live).get("/me").status_code == 200


def test_issuing_a_token_drops_the_pinners_expired_ones(
    anon: Api, site_store: Any, make_user: Callable[..., User], settings: Any
) -> None:
    ann = make_user("ann")
    settings.API_TOKEN_SECONDS = 0
    for _ in range(3):
        token_for(anon, ann)
    settings.API_TOKEN_SECONDS = 3600
    live = token_for(anon, ann)["token"]
    assert site_store.mapping("user_has_tokens").page(ann["id"]).ids == [int(live.split(".")[0])]


def test_delete_revokes_the_presented_token_only(
    anon: Api, client: Client, site_store: Any, make_user: Callable[..., User]
) -> None:
    ann = make_user("ann")
    first, second = token_for(anon, ann)["token"], token_for(anon, ann)["token"]
    revoking = as_token(client, first)
    assert revoking.get("/me").status_code == 200
    response = revoking.delete("/auth/token")
    assert response.status_code == 204 and response.content == b""
    assert error_of(revoking.get("/me"), 401)["code"] == "unauthenticated"
    assert error_of(revoking.delete("/auth/token"), 401)["code"] == "unauthenticated"
    assert as_token(client, second).get("/me").status_code == 200
    first_id = int(first.split(".")[0])
    assert site_store.objects("token").get(first_id) is None  # gone, not merely flagged
    assert site_store.mapping("user_has_tokens").page(ann["id"]).ids == [int(second.split(".")[0])]
    assert error_of(anon.delete("/auth/token"), 401)["code"] == "unauthenticated"


def test_malformed_or_forged_tokens_are_401(
    anon: Api, client: Client, make_user: Callable[..., User]
) -> None:
    ann = make_user("ann")
    token_id, secret = token_for(anon, ann)["token"].split(".")
    shard = decompose(ann["id"]).shard_id
    forged = [
        "garbage",
        f"{token_id}",
        f"{token_id}.",
        f"{token_id}.{secret[:-1]}x",  # the wrong secret
        f"{ann['id']}.{secret}",  # a user ID where a token ID goes
        f"{compose(shard, CATALOG.type('token').type_id, 999_999)}.{secret}",  # no such token
        f"0{token_id}.{secret}",
        f"{token_id}.{secret}.{secret}",
        "99999999999999999999999.x",
    ]
    for token in forged:
        api = as_token(client, token)
        assert error_of(api.get("/me"), 401)["code"] == "unauthenticated", token
        assert error_of(api.delete("/auth/token"), 401)["code"] == "unauthenticated", token
    assert as_token(client, f"{token_id}.{secret}").get("/me").status_code == 200


def test_a_password_change_revokes_every_token(
    anon: Api, client: Client, site_store: Any, make_user: Callable[..., User]
) -> None:
    ann = make_user("ann")
    tokens = [token_for(anon, ann)["token"] for _ in range(3)]
    browser = Client()
    log_in(browser, ann)
    api = as_token(client, tokens[0])
    change = {"old_password": PASSWORD, "new_password": NEW_PASSWORD}
    assert api.post("/me/password", change).status_code == 204
    assert not signed_in(browser)  # sessions end too
    for token in tokens:
        assert error_of(as_token(client, token).get("/me"), 401)["code"] == "unauthenticated"
    assert site_store.mapping("user_has_tokens").count(ann["id"]) == 0
    assert error_of(
        anon.post("/auth/token", {"username": ann["username"], "password": PASSWORD}), 401
    )
    assert (
        as_token(client, token_for(anon, ann, NEW_PASSWORD)["token"]).get("/me").status_code == 200
    )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"old_password": "not it at all", "new_password": NEW_PASSWORD}, "old_password"),
        ({"old_password": 42, "new_password": NEW_PASSWORD}, "old_password"),
        ({"old_password": PASSWORD, "new_password": "12345678901"}, "new_password"),
        ({"old_password": PASSWORD, "new_password": "short"}, "new_password"),
        ({"old_password": PASSWORD, "new_password": None}, "new_password"),
    ],
)
def test_a_refused_password_change_changes_nothing(
    anon: Api, client: Client, make_user: Callable[..., User], change: dict[str, Any], field: str
) -> None:
    ann = make_user("ann")
    api = as_token(client, token_for(anon, ann)["token"])
    error = error_of(api.post("/me/password", change), 422)
    assert (error["code"], error["field"]) == ("invalid", field)
    assert api.get("/me").status_code == 200
    assert authenticate(ann["username"], PASSWORD) is not None


def test_the_password_change_needs_a_token(anon: Api) -> None:
    change = {"old_password": PASSWORD, "new_password": NEW_PASSWORD}
    assert error_of(anon.post("/me/password", change), 401)["code"] == "unauthenticated"


def test_the_openapi_document_describes_tokens() -> None:
    paths = build()["paths"]
    revoke = paths["/api/v1/auth/token"]["delete"]
    assert set(revoke["responses"]) == {"204", "401", "503"} and revoke["security"]
    assert "30 days" in paths["/api/v1/auth/token"]["post"]["summary"]
    change = paths["/api/v1/me/password"]["post"]
    assert {"204", "401", "422", "429"} <= set(change["responses"]) and change["security"]
    token = build()["components"]["schemas"]["Token"]
    assert set(token["properties"]) == {"token", "expires_at"}
    assert "<token ID>.<secret>" in token["properties"]["token"]["description"]
