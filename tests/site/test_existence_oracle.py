"""No existence oracle: every route of the site and the API answers a stranger about a
secret board or pin exactly as about one that does not exist, whatever it is sent (a bad
cursor, a form, a JSON body), signed in or not.

The routes are read from the URL patterns themselves, so a new route is walked too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from pinboard.data_plane import cached_store
from shardstore import compose, decompose
from tests.site.api_client import Api
from tests.site.page_helpers import log_in
from toolkit.images import image_upload

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
PARAMS = ("board_id", "pin_id", "comment_id", "user_id", "username", "slug")
#: Query strings a page or list may be sent: none, and cursors that do not parse.
QUERIES = ("", "?cursor=x", "?comments=x&partial=1", "?cursor=%ff%00")
_csrf = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')


def walk(patterns: list[Any], prefix: str = "") -> Iterator[str]:
    """Every route, as its pattern text (``pin/<str:pin_id>/``)."""
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern)


def naming_a_board_or_pin(route: str) -> bool:
    return "<str:board_id>" in route or "<str:pin_id>" in route or "<str:slug>" in route


def missing(object_id: int) -> int:
    """An ID of the same shard and type that no object has."""
    shard, type_id, local = decompose(object_id)
    return compose(shard, type_id, local + 1_000_000)


@pytest.fixture
def secrets(client: Client, make_user: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """ann's secret board with a pin and a comment on it; bob, a stranger, with a board."""
    ann, bob = make_user("ann"), make_user("bob")
    owner = Api.as_pinner(client, ann)
    board = owner.post("/boards", {"name": "Diary", "secret": True}).json()
    pin = owner.new_pin(board["id"], image_upload(), description="dear diary")
    comment = owner.post(f"/pins/{pin['id']}/comments", {"text": "note"}).json()
    bobs_board = Api.as_pinner(client, bob).new_board("Bob's")
    named = {"board": board, "pin": pin, "comment": comment, "bobs_board": bobs_board}
    return {"ann": ann, "bob": bob, **named}


def fill(route: str, w: dict[str, Any], *, secret: bool) -> tuple[str, list[str]]:
    """The route's path naming the secret objects (or missing ones), and the IDs in it."""
    board, pin, comment = (int(w[k]["id"]) for k in ("board", "pin", "comment"))
    if not secret:
        board, pin, comment = missing(board), missing(pin), missing(comment)
    values = {
        "board_id": str(board),
        "pin_id": str(pin),
        "comment_id": str(comment),
        "user_id": str(w["bob"]["id"]),
        "username": w["ann"]["username"],
        "slug": w["board"]["slug"] if secret else "no-such-board",
        "answer": "accept",  # an invitation's
        "variant": "full",  # a pin's image file
    }
    path = "/" + re.sub(r"<str:(\w+)>", lambda m: values[m.group(1)], route)
    return path, [values[k] for k in ("board_id", "pin_id", "comment_id", "slug")]


def shape(response: Any, ids: list[str]) -> tuple[Any, ...]:
    """What a response says, the IDs of the path and the form's token left out."""
    body = _csrf.sub("", response.content.decode(errors="replace"))
    location = response.get("Location", "")
    for n, value in enumerate(ids):
        body, location = body.replace(value, f"<{n}>"), location.replace(value, f"<{n}>")
    return response.status_code, response.get("Content-Type"), location, body


def send(client: Client, method: str, path: str, w: dict[str, Any], token: str | None) -> Any:
    """A request as a stranger makes it: a JSON body to the API, a form to a page."""
    if "/api/" in path:
        body = {"board_id": str(w["bobs_board"]["id"]), "text": "hi", "description": "x"}
        headers = {"Authorization": f"Token {token}"} if token else {}
        return client.generic(method, path, json.dumps(body), "application/json", headers=headers)
    form = {
        "board": str(w["bobs_board"]["id"]),
        "text": "hi",
        "description": "x",
        "name": "x",
        "username": w["bob"]["username"],
    }
    return client.post(path, form) if method == "POST" else client.generic(method, path)


def answers(client: Client, request: str, w: dict[str, Any], token: str | None) -> list[Any]:
    """How ``request`` (method, route and query) is answered about the secret objects, and
    about missing ones."""
    method, route, query = request.split(" ")
    shapes = []
    for secret in (True, False):
        caches["ratelimit"].clear()  # a limit reached between the two would differ
        path, ids = fill(route, w, secret=secret)
        shapes.append(shape(send(client, method, path + query, w, token), ids))
    return shapes


def test_a_stranger_cannot_tell_a_secret_board_or_pin_from_a_missing_one(
    client: Client, secrets: dict[str, Any]
) -> None:
    routes = [r for r in walk(get_resolver().url_patterns) if naming_a_board_or_pin(r)]
    assert len(routes) >= 25, routes  # the site's and the API's
    requests = [
        f"{method} {route} {query}"
        for route in routes
        for method in METHODS
        for query in (QUERIES if method == "GET" else ("",))
    ]
    token = Api.as_pinner(client, secrets["bob"]).token
    differ = []
    for signed_in in (False, True):
        if signed_in:
            log_in(client, secrets["bob"])
        for request in requests:
            secret, missing_one = answers(client, request, secrets, token if signed_in else None)
            if secret != missing_one:
                differ.append(f"{signed_in=} {request}: {secret[:3]} != {missing_one[:3]}")
    assert differ == [], "\n".join(differ)
    board_id, pin_id = int(secrets["board"]["id"]), int(secrets["pin"]["id"])
    store = cached_store()
    for relation in ("board_unfollowed_by_users", "board_followed_by_users"):
        assert store.mapping(relation).page(board_id).ids == []
    assert store.mapping("pin_liked_by_users").page(pin_id).ids == []
    assert store.mapping("pin_saved_as_pins").page(pin_id).ids == []
    assert len(store.mapping("pin_has_comments").page(pin_id).ids) == 1
    assert store.objects("pin").get(pin_id) is not None
