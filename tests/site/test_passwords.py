"""Usernames must match their rule whole; passwords pass Django's validators and are hashed
with Argon2; a log-in runs the hasher once whether or not the username exists."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.hashers import MD5PasswordHasher, make_password
from django.test import Client, override_settings

from pinboard.errors import InvalidField
from pinboard.settings import base
from pinboard.users.actions import authenticate, sign_up
from tests.site.api_client import Api, error_of

_n = itertools.count(1)
PASSWORD = "plum-orchard-42"


def fresh(name: str) -> tuple[str, str]:
    n = next(_n)
    return f"{name}_{n}_pw", f"{name}_{n}_pw@example.com"


# -- usernames ---------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["\n", "\r\n", "\n\n", " ", "\t"])
def test_a_username_with_trailing_whitespace_is_refused(site_store: Any, suffix: str) -> None:
    username, email = fresh("ada")
    with pytest.raises(InvalidField) as error:
        sign_up(username + suffix, email, PASSWORD)
    assert error.value.field == "username"


def test_the_api_refuses_a_username_ending_in_a_newline(client: Client, site_store: Any) -> None:
    username, email = fresh("ada")
    body = {"username": username + "\n", "email": email, "password": PASSWORD}
    assert error_of(Api(client).post("/users", body), 422)["field"] == "username"


# -- password rules ----------------------------------------------------------------


def test_the_base_settings_use_the_four_validators_and_argon2_first() -> None:
    assert [v["NAME"].rsplit(".", 1)[1] for v in base.AUTH_PASSWORD_VALIDATORS] == [
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    ]
    assert base.PASSWORD_HASHERS[0] == "django.contrib.auth.hashers.Argon2PasswordHasher"


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("password123", "too common"),
        ("qwertyuiop", "too common"),
        ("8675309123", "entirely numeric"),
        ("{username}", "too similar to the username"),
        ("short", "8-256 characters"),
    ],
)
def test_weak_passwords_are_refused_on_the_password_field(
    client: Client, site_store: Any, password: str, message: str
) -> None:
    username, email = fresh("weak")
    password = password.format(username=username)
    with pytest.raises(InvalidField) as error:
        sign_up(username, email, password)
    assert error.value.field == "password" and message in error.value.message
    body = {"username": username, "email": email, "password": password}
    api_error = error_of(Api(client).post("/users", body), 422)
    assert api_error["field"] == "password" and message in api_error["message"]
    page = client.post("/signup/", body)
    assert page.status_code == 422 and message in page.content.decode()


@override_settings(PASSWORD_HASHERS=base.PASSWORD_HASHERS)
def test_a_new_pinner_is_hashed_with_argon2(site_store: Any) -> None:
    username, email = fresh("argon")
    user = sign_up(username, email, PASSWORD)
    assert user["password"].startswith("argon2$")
    assert authenticate(username, PASSWORD)["id"] == user["id"]


@override_settings(PASSWORD_HASHERS=base.PASSWORD_HASHERS)
def test_an_older_pbkdf2_hash_becomes_argon2_at_log_in(site_store: Any) -> None:
    username, email = fresh("pbkdf2")
    user = sign_up(username, email, PASSWORD)
    legacy = make_password(PASSWORD, hasher="pbkdf2_sha256")
    site_store.objects("user").update(user["id"], {"password": legacy})
    assert authenticate(username, "wrong-password-here") is None
    assert site_store.objects("user").get(user["id"])["password"] == legacy
    assert authenticate(username, PASSWORD)["id"] == user["id"]
    assert site_store.objects("user").get(user["id"])["password"].startswith("argon2$")


# -- log-in timing -----------------------------------------------------------------


class CountingHasher(MD5PasswordHasher):
    """MD5 (fast, tests only) that counts how many times it hashed a password."""

    algorithm = "counting_md5"
    runs = 0

    def encode(self, password: str, salt: str) -> str:  # make_password and verify both call it
        type(self).runs += 1
        return super().encode(password, salt)


@pytest.fixture
def counting_hasher() -> Iterator[type[CountingHasher]]:
    with override_settings(PASSWORD_HASHERS=[f"{__name__}.CountingHasher"]):
        yield CountingHasher


def hasher_runs(hasher: type[CountingHasher], attempt: Any) -> tuple[int, Any]:
    before = hasher.runs
    result = attempt()
    return hasher.runs - before, result


def test_an_unknown_login_runs_the_hasher_as_a_wrong_password_does(
    client: Client, site_store: Any, counting_hasher: type[CountingHasher]
) -> None:
    username, email = fresh("timing")
    sign_up(username, email, PASSWORD)
    attempts = {
        "existing username, wrong password": (username, "wrong-password-1"),
        "existing email, wrong password": (email, "wrong-password-1"),
        "unknown username": (f"{username}_nobody", "wrong-password-1"),
        "unknown email": (f"nobody_{email}", "wrong-password-1"),
        "malformed username": ("x" * 400, "wrong-password-1"),
    }
    for why, (login, password) in attempts.items():
        runs, user = hasher_runs(counting_hasher, lambda: authenticate(login, password))  # noqa: B023
        assert (runs, user) == (1, None), why
    runs, user = hasher_runs(counting_hasher, lambda: authenticate(username, PASSWORD))
    assert runs == 1 and user is not None

    api, messages, pages = Api(client), set(), set()
    for login, password in attempts.values():
        runs, response = hasher_runs(
            counting_hasher,
            lambda: api.post("/auth/token", {"username": login, "password": password}),  # noqa: B023
        )
        assert runs == 1
        messages.add(error_of(response, 401)["message"])
        page = client.post("/login/", {"login": login, "password": password})
        pages.add(page.content.decode().split('role="alert">')[1].split("<")[0])
    assert len(messages) == 1 and len(pages) == 1  # the same answer for every case
