"""Rate limits: pins per pinner on the pages and the API, and Retry-After on every 429."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client

from pinboard.pins.queries import board_pins_page
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import log_in, text
from toolkit.images import image_upload

#: A window far longer than a test, so no test straddles two windows.
PERIOD = 1_000_000


@pytest.fixture
def tight_limits(settings: Any) -> Iterator[None]:
    settings.RATE_LIMITS = {"login": (2, PERIOD), "signup": (2, PERIOD), "pin": (2, PERIOD)}
    caches["ratelimit"].clear()
    yield
    caches["ratelimit"].clear()


def retry_after(response: Any) -> int:
    """The Retry-After header of a 429: whole seconds, at most the window."""
    assert response.status_code == 429, (response.status_code, response.content[:300])
    seconds = int(response["Retry-After"])
    assert 1 <= seconds <= PERIOD
    return seconds


@pytest.mark.usefixtures("tight_limits")
def test_pin_creation_through_the_api_is_limited_per_pinner(
    client: Client, make_user: Callable[..., dict[str, Any]]
) -> None:
    ada = Api.as_pinner(client, make_user("ada"))
    board = ada.new_board("Limited")
    for _ in range(2):
        ada.new_pin(board["id"], image_upload())
    # The third is refused, whatever address it comes from, and nothing is made.
    response = client.post(
        "/api/v1/pins",
        {"board_id": board["id"], "image": image_upload()},
        headers=ada.headers(),
        REMOTE_ADDR="10.9.9.9",
    )
    assert error_of(response, 429)["code"] == "rate_limited"
    retry_after(response)
    assert len(board_pins_page(int(board["id"])).ids) == 2
    # Another pinner from the same address is not held back by ada's attempts.
    bob = Api.as_pinner(client, make_user("bob"))
    bob.new_pin(bob.new_board("Free")["id"], image_upload())


@pytest.mark.usefixtures("tight_limits")
def test_saves_through_the_api_count_against_the_pin_limit(
    client: Client, cast: dict[str, Any]
) -> None:
    bob = Api.as_pinner(client, cast["bob"])
    save = {"board_id": str(cast["bobs"]["id"])}
    for _ in range(2):
        assert bob.post(f"/pins/{cast['pin']}/save", save).status_code == 201
    response = bob.post(f"/pins/{cast['pin']}/save", save)
    assert error_of(response, 429)["code"] == "rate_limited"
    retry_after(response)
    assert len(board_pins_page(cast["bobs"]["id"]).ids) == 2


@pytest.mark.usefixtures("tight_limits")
def test_pin_pages_are_limited_with_a_friendly_429(client: Client, cast: dict[str, Any]) -> None:
    bob = cast["bob"]
    log_in(client, bob)
    board = cast["bobs"]["id"]
    assert client.post("/pin/new/", {"board": board, "image": image_upload()}).status_code == 302
    assert client.post(f"/pin/{cast['pin']}/save/", {"board": board}).status_code == 302
    form = client.post("/pin/new/", {"board": board, "image": image_upload()})
    retry_after(form)
    assert "too many pin attempts" in text(form) and 'name="image"' in text(form)
    saved = client.post(f"/pin/{cast['pin']}/save/", {"board": board})
    retry_after(saved)
    assert "Slow down" in text(saved)
    assert len(board_pins_page(board).ids) == 2


@pytest.mark.usefixtures("tight_limits")
def test_every_log_in_and_sign_up_429_carries_retry_after(
    client: Client, make_user: Callable[..., dict[str, Any]]
) -> None:
    ann = make_user("ann")
    pages = {
        "/login/": {"login": ann["username"], "password": "wrong-pass"},
        "/signup/": {"username": "x", "email": "bad", "password": "short"},
    }
    for url, form in pages.items():
        for _ in range(2):
            client.post(url, form, REMOTE_ADDR="10.0.0.9")
        retry_after(client.post(url, form, REMOTE_ADDR="10.0.0.9"))
    anon = Api(client)
    token = {"username": ann["username"], "password": "wrong-pass"}
    signup = {"username": "x", "email": "bad", "password": "short"}
    for path, body in (("/auth/token", token), ("/users", signup)):
        caches["ratelimit"].clear()
        for _ in range(2):
            anon.post(path, body)
        response = anon.post(path, body)
        assert error_of(response, 429)["code"] == "rate_limited"
        retry_after(response)


def test_the_document_lists_429_with_retry_after_for_limited_operations(
    client: Client, site_store: Any
) -> None:
    document = client.get("/api/v1/openapi.json").json()
    assert document["components"]["responses"]["E429"]["headers"]["Retry-After"]["required"]
    for method, path in [
        ("post", "/api/v1/auth/token"),
        ("post", "/api/v1/users"),
        ("post", "/api/v1/pins"),
        ("post", "/api/v1/pins/{pin_id}/save"),
        ("put", "/api/v1/me/avatar"),
    ]:
        assert "429" in document["paths"][path][method]["responses"], (method, path)


def test_the_pin_limit_is_on_by_default(settings: Any) -> None:
    from pinboard.settings import base

    count, period = base.RATE_LIMITS["pin"]
    assert 0 < count <= 60 and period == 60
    assert "pin" in settings.RATE_LIMITS


@pytest.mark.usefixtures("tight_limits")
def test_behind_a_proxy_log_ins_are_counted_per_address_the_proxy_saw(
    client: Client, settings: Any
) -> None:
    """Every request reaches gunicorn from nginx (one REMOTE_ADDR): with
    CLIENT_ADDRESS_HEADER the limit is per client, as nginx's X-Real-IP says."""
    settings.CLIENT_ADDRESS_HEADER = "HTTP_X_REAL_IP"

    def log_in_from(address: str) -> int:
        response = client.post(
            "/api/v1/auth/token",
            {"username": "nobody", "password": "wrong"},
            content_type="application/json",
            REMOTE_ADDR="127.0.0.1",
            HTTP_X_REAL_IP=address,
        )
        return response.status_code

    assert [log_in_from("203.0.113.7") for _ in range(3)][-1] == 429
    assert log_in_from("198.51.100.2") != 429  # another client behind the same nginx
    settings.CLIENT_ADDRESS_HEADER = None
    # Without it the header is not believed: three "clients" are one address, limited.
    assert [log_in_from(f"192.0.2.{n}") for n in (1, 2, 3)] == [401, 401, 429]
