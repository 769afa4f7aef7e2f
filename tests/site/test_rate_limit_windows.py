"""Rate limits slide, and hold per address and per account: passwords (wrong ones lock
out the address that guessed, and slow an account guessed at from many, never its own
pinner out), every write (comments, follows, likes...) and search.
(Pins, avatars, sign-ups and Retry-After on every 429: test_rate_limits.py.)"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client

from pinboard import ratelimit
from pinboard.errors import RateLimited
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import log_in, text


@pytest.fixture
def limits(settings: Any) -> Iterator[Callable[..., None]]:
    def set_limits(**scopes: tuple[int, int]) -> None:
        settings.RATE_LIMITS = {**settings.RATE_LIMITS, **scopes}

    caches["ratelimit"].clear()
    yield set_limits
    caches["ratelimit"].clear()


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The time the limits read: ``clock[0] = seconds`` moves it."""
    now = [1_000_000_020.0]  # the start of a minute, and of a bucket
    monkeypatch.setattr(ratelimit.time, "time", lambda: now[0])
    return now


def attempts_let_through(count: int, who: str = "someone") -> int:
    passed = 0
    for _ in range(count):
        try:
            ratelimit.count_attempt("login", who)
        except RateLimited:
            continue
        passed += 1
    return passed


def test_the_window_slides_instead_of_resetting_mid_attack(
    limits: Callable[..., None], clock: list[float]
) -> None:
    limits(login=(10, 60))
    start = clock[0]  # the edge of a fixed window of a minute
    clock[0] = start - 0.1
    assert attempts_let_through(20) == 10
    clock[0] = start + 0.1  # a fixed window would let ten more through here
    assert attempts_let_through(20) == 0
    clock[0] = start + 30  # and here
    assert attempts_let_through(20) == 0
    clock[0] = start + 54.9  # the attempts are still within a minute
    assert attempts_let_through(20) == 0
    clock[0] = start + 55  # their bucket has left the window
    assert attempts_let_through(20) == 10


def test_a_refusal_says_when_one_more_will_pass(
    limits: Callable[..., None], clock: list[float]
) -> None:
    limits(login=(4, 60))
    assert attempts_let_through(4) == 4
    with pytest.raises(RateLimited) as refused:
        ratelimit.count_attempt("login", "someone")
    assert refused.value.retry_after is not None and 1 <= refused.value.retry_after <= 60
    clock[0] += refused.value.retry_after
    assert attempts_let_through(1) == 1


def test_guesses_at_an_account_lock_out_the_guessing_addresses_never_the_pinner(
    client: Client, limits: Callable[..., None], make_user: Callable[..., dict[str, Any]]
) -> None:
    limits(login=(1000, 60), login_failures=(3, 300), login_account=(5, 300))
    ann = make_user("ann")

    def log_in_as(login: str, password: str, address: str) -> int:
        form = {"login": login, "password": password}
        return Client().post("/login/", form, REMOTE_ADDR=address).status_code

    # Three wrong from one address: that address is refused at ann's name, her password too.
    assert [log_in_as(ann["username"], "wrong-pass", "10.1.0.1") for _ in range(3)] == [422] * 3
    assert log_in_as(ann["username"], "plum-orchard-42", "10.1.0.1") == 429
    body = {"username": ann["username"], "password": "plum-orchard-42"}
    assert error_of(Api(client).post("/auth/token", body, REMOTE_ADDR="10.1.0.1"), 429)
    # From an address that has not failed at it, her password lets her in.
    assert log_in_as(ann["username"], "plum-orchard-42", "10.1.0.2") == 302
    # Her email is counted apart from her username: its count tells nothing of whose it is.
    assert log_in_as(ann["email"], "plum-orchard-42", "10.1.0.1") == 302
    # Past five wrong from anywhere, the addresses that failed take one try at a time...
    assert [log_in_as(ann["username"], "wrong-pass", f"10.1.1.{n}") for n in range(2)] == [422] * 2  # fmt: skip
    assert log_in_as(ann["username"], "wrong-pass", "10.1.1.0") == 422  # the one try
    assert log_in_as(ann["username"], "plum-orchard-42", "10.1.1.1") == 429  # slowed
    # ...and a fresh address is never refused for the account's sake.
    assert log_in_as(ann["username"], "plum-orchard-42", "10.1.2.9") == 302
    # A name that is no account's is counted alike: a 429 tells nothing.
    answers = [log_in_as("no_such_pinner", "wrong-pass", "10.1.3.1") for _ in range(4)]
    assert answers == [422, 422, 422, 429]


def test_every_write_is_limited_per_pinner_and_per_address(
    client: Client, limits: Callable[..., None], cast: dict[str, Any]
) -> None:
    limits(write=(3, 60), write_address=(5, 60))
    bob = Api.as_pinner(client, cast["bob"])
    ann = Api.as_pinner(client, cast["ann"])
    pin = cast["pin"]
    writes = [
        bob.post(f"/pins/{pin}/comments", {"text": "one"}, REMOTE_ADDR="10.3.0.1"),
        bob.put(f"/users/{ann.id}/follow", REMOTE_ADDR="10.3.0.2"),
        bob.put(f"/pins/{pin}/like", REMOTE_ADDR="10.3.0.3"),
        bob.post(f"/pins/{pin}/comments", {"text": "four"}, REMOTE_ADDR="10.3.0.4"),
    ]
    assert [w.status_code for w in writes] == [201, 204, 204, 429]
    assert error_of(writes[-1], 429)["code"] == "rate_limited" and writes[-1]["Retry-After"]
    assert ann.get(f"/pins/{pin}/comments").json()["items"][-1]["text"] == "one"
    # The page's forms count alike, and answer a page.
    log_in(client, cast["bob"])
    refused = client.post(f"/pin/{pin}/comment/", {"text": "five"}, REMOTE_ADDR="10.3.0.5")
    assert refused.status_code == 429 and refused["Retry-After"]
    assert "too many write attempts" in text(refused)
    # Per address: other pinners behind one address share its allowance.
    caches["ratelimit"].clear()
    shared = [
        api.put(f"/pins/{pin}/like", REMOTE_ADDR="10.4.0.1").status_code
        for api in (ann, bob, ann, bob, ann, bob)
    ]
    assert shared[:5] == [204] * 5 and shared[5] == 429


def test_search_is_limited_per_pinner_and_per_address(
    client: Client, limits: Callable[..., None], cast: dict[str, Any]
) -> None:
    limits(search=(2, 60), search_address=(5, 60))
    bob = Api.as_pinner(client, cast["bob"])
    answers = [bob.get("/search", q="recipes").status_code for _ in range(3)]
    assert answers == [200, 200, 429]
    anon = [client.get("/search/", {"q": "recipes"}).status_code for _ in range(3)]
    assert anon == [200, 200, 429]  # the address's five are spent (bob's refused one too)
    caches["ratelimit"].clear()
    log_in(client, cast["ann"])
    assert [client.get("/search/", {"q": "x"}).status_code for _ in range(3)] == [200, 200, 429]


def test_logging_out_is_never_refused(
    client: Client, limits: Callable[..., None], cast: dict[str, Any]
) -> None:
    limits(write=(1, 60), write_address=(2, 60))  # a like, then a log-in: both spent
    ann = Api.as_pinner(client, cast["ann"])
    ann.put(f"/pins/{cast['pin']}/like")
    assert ann.delete("/auth/token").status_code == 204
    log_in(client, cast["bob"])
    assert client.post("/logout/").status_code == 302
