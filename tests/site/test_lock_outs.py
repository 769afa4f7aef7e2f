"""No one can lock anyone out, under the limits a deployment runs with (``settings.base``):
wrong passwords lock out the address that tried them at that account, never the right
password from an address that has not failed, for pinners and for the staff ``operator``
account alike (its log-in and the console's password prompt count together); and how a
log-in by email answers says nothing of whether the email is an account's.
(The windows' arithmetic and lowered limits: test_rate_limit_windows.py.)"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.test import Client

from pinboard.settings import base
from tests.site.api_client import Api
from tests.site.ops import clock_fixture  # noqa: F401
from tests.site.test_ops_roles import PASSWORD

PINNERS = "plum-orchard-42"  # make_user's
GUESSES = base.RATE_LIMITS["login_failures"][0]  # ten, as deployed
WIDE_O = "\N{FULLWIDTH LATIN SMALL LETTER O}"
WIDE = "".join(chr(ord(letter) + 0xFEE0) for letter in "operator")  # fullwidth letters


@pytest.fixture(autouse=True)
def deployed_limits(settings: Any) -> Iterator[None]:
    names = ("login", "login_failures", "login_account")
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, **{n: base.RATE_LIMITS[n] for n in names}}
    settings.LOGIN_SLOWED_SECONDS = base.LOGIN_SLOWED_SECONDS
    caches["ratelimit"].clear()
    yield
    caches["ratelimit"].clear()


def log_in(login: str, password: str, address: str) -> Any:
    return Client().post("/login/", {"login": login, "password": password}, REMOTE_ADDR=address)


def test_wrong_passwords_from_one_address_never_stop_the_right_one_from_another(
    client: Client, make_user: Callable[..., dict[str, Any]]
) -> None:
    ann = make_user("ann")
    wrong = [log_in(ann["username"], "wrong-pass", "10.7.0.1").status_code for _ in range(GUESSES)]
    assert wrong == [422] * GUESSES
    refused = log_in(ann["username"], PINNERS, "10.7.0.1")  # that address is limited...
    assert refused.status_code == 429 and 0 < int(refused["Retry-After"]) <= 300
    token = {"username": ann["username"], "password": PINNERS}
    assert Api(client).post("/auth/token", token, REMOTE_ADDR="10.7.0.1").status_code == 429
    assert log_in(ann["username"], PINNERS, "10.7.0.2").status_code == 302  # ...ann is not
    assert Api(client).post("/auth/token", token, REMOTE_ADDR="10.7.0.3").status_code == 200


def test_an_email_with_an_account_and_one_without_answer_alike(
    client: Client, make_user: Callable[..., dict[str, Any]]
) -> None:
    """Past the limits too: each name typed is counted as typed, whoever's it is."""
    taken = make_user("ann")["email"]

    def answers(email: str, network: str) -> list[tuple[int, str, str | None]]:
        seen = []
        for n in range(GUESSES + 3):  # a fresh address, then two past their limit
            address = f"{network}.{n % 2 if n < GUESSES else 0}"
            page = log_in(email, "wrong-pass", address)
            body = re.sub(r'value="[^"]*"', "", page.content.decode().replace(email, "EMAIL"))
            seen.append((page.status_code, body, page.headers.get("Retry-After")))
        token = {"username": email, "password": "wrong-pass"}
        api = Api(client).post("/auth/token", token, REMOTE_ADDR=f"{network}.9")
        return [*seen, (api.status_code, api.content.decode(), api.headers.get("Retry-After"))]

    seen = answers(taken, "10.8.0")
    assert 429 in [status for status, _, _ in seen]  # past the limits
    assert seen == answers("nobody@example.com", "10.8.1")


@pytest.mark.django_db
def test_the_operator_account_cannot_be_blocked_from_a_clean_address(
    clock: list[float],
) -> None:
    get_user_model().objects.create_superuser("operator", password=PASSWORD)

    def staff_log_in(client: Client, password: str, address: str) -> int:
        form = {"username": "operator", "password": password, "next": "/ops/"}
        return client.post("/admin/login/", form, REMOTE_ADDR=address).status_code

    def prompt(client: Client, password: str, address: str) -> int:
        form = {"password": password, "next": "/ops/"}
        return client.post("/ops/confirm/", form, REMOTE_ADDR=address).status_code

    ops = Client()
    assert staff_log_in(ops, PASSWORD, "10.9.0.1") == 302
    clock[0] += 5 * 60 + 1  # its sudo mode over: the console will ask again
    stolen = Client()
    stolen.force_login(get_user_model().objects.get(username="operator"))
    assert [prompt(stolen, "a-guess", "10.9.6.6") for _ in range(GUESSES)] == [403] * GUESSES
    for n in range(20):  # twenty addresses, each up to its limit and past it
        guesses = [staff_log_in(Client(), "a-guess", f"10.9.1.{n}") for _ in range(GUESSES + 1)]
        assert guesses[-1] == 429 and set(guesses[:GUESSES]) <= {200, 429}
    assert prompt(stolen, PASSWORD, "10.9.6.6") == 429  # an address that guessed
    assert staff_log_in(Client(), PASSWORD, "10.9.6.6") == 429
    assert prompt(ops, PASSWORD, "10.9.0.1") == 302  # the operator, from where they are
    assert staff_log_in(Client(), PASSWORD, "10.9.2.1") == 302  # or from anywhere else clean


@pytest.mark.django_db
@pytest.mark.parametrize("spelling", ["OPERATOR", " operator", f"{WIDE_O}perator", WIDE])
def test_the_staff_log_in_counts_every_spelling_of_an_account_at_it(spelling: str) -> None:
    """The admin's form reads a username as Unicode's compatibility form (NFKC): each way of
    writing "operator" that it reads as the account is counted at the account."""
    get_user_model().objects.create_superuser("operator", password=PASSWORD)

    def staff_log_in(username: str, password: str) -> int:
        form = {"username": username, "password": password, "next": "/ops/"}
        return Client().post("/admin/login/", form, REMOTE_ADDR="10.9.3.1").status_code

    assert [staff_log_in("operator", "a-guess") for _ in range(GUESSES)] == [200] * GUESSES
    assert staff_log_in(spelling, "a-guess") == 429
    assert staff_log_in(spelling, PASSWORD) == 429  # not a way round the address's lock-out
