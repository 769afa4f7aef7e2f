"""Bad cursors, page sizes and IDs, on every route of the URLconf: a 400 or a 404, never a 500.

Pages answer a malformed cursor with a friendly 400 page, the API with a JSON
400; an ID in a path has one spelling (no leading zeros, signs, spaces or
non-ASCII digits), any other is a 404. The test client re-raises any exception
a view lets escape, so a 500 fails these tests loudly.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from pinboard.pins.actions import add_comment
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import log_in, text

#: Pages that read ``?cursor=`` (the pin page reads ``?comments=``).
CURSOR_PAGES = {
    "landing",
    "profile",
    "followers",
    "following",
    "likes",
    "board",
    "notifications",
    "search",
}
BAD_CURSORS = ["abc", "%%%", "Zm9vOmJhcg", "MTox" * 20, "\x00", "-1", "9" * 40]
#: Other spellings of a good ID ("{}" is the ID): each must be a 404.
ID_SPELLINGS = ["0{}", "00{}", "+{}", "-{}", "%20{}", "{}%20", "{}%0A", "%09{}", "{}.0", "{}abc"]
ARABIC_INDIC = str.maketrans(
    "0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669"
)


@pytest.fixture
def cast(cast: dict[str, Any]) -> dict[str, Any]:
    """The site's cast, with a comment of bob's on ann's pin, for routes that name one."""
    return {**cast, "comment": add_comment(cast["bob"]["id"], cast["pin"], "Nice")["id"]}


def routes() -> list[tuple[str, str, str]]:
    """(prefix, route, name) for every URL pattern, API patterns included; media left out."""
    found = []

    def walk(patterns: list[Any], prefix: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and not str(pattern.pattern).startswith("^media"):
                found.append((prefix, str(pattern.pattern), pattern.name or ""))

    walk(get_resolver().url_patterns, "/")
    return found


def fill(route: str, cast: dict[str, Any], **override: str) -> str:
    values = {
        "username": cast["ann"]["username"],
        "slug": cast["recipes"]["slug"],
        "board_id": str(cast["recipes"]["id"]),
        "pin_id": str(cast["pin"]),
        "user_id": str(cast["bob"]["id"]),
        "comment_id": str(cast["comment"]),
        "answer": "accept",  # an invitation's
        "variant": "full",  # a pin's image file
        **override,
    }
    for name, value in values.items():
        route = route.replace(f"<str:{name}>", value)
    assert "<" not in route, route
    return route


def page_routes() -> list[tuple[str, str]]:
    return [(route, name) for prefix, route, name in routes() if prefix == "/"]


def api_routes() -> list[str]:
    # (the console and the admin are staff pages: tests/site/test_ops_*.py)
    return [prefix + route for prefix, route, _ in routes() if prefix.startswith("/api/") and route]


@pytest.mark.parametrize(("route", "name"), page_routes())
def test_every_page_answers_a_bad_cursor_with_400_or_ignores_it(
    client: Client, cast: dict[str, Any], route: str, name: str
) -> None:
    log_in(client, cast["ann"])
    url = "/" + fill(route, cast)
    for cursor in BAD_CURSORS:
        for method in ("get", "post"):
            response = getattr(client, method)(url, {"cursor": cursor, "comments": cursor})
            if name in CURSOR_PAGES and method == "get":
                assert response.status_code == 400, (url, cursor, response.status_code)
                assert "not one of ours" in text(response) and "<html" in text(response)
            elif name == "pin" and method == "get":  # the comments' cursor
                assert response.status_code == 400, (url, cursor)
            else:
                assert response.status_code < 500, (method, url, cursor)


def test_the_home_feed_with_a_bad_cursor_is_a_400_page(
    client: Client, cast: dict[str, Any]
) -> None:
    log_in(client, cast["ann"])
    response = client.get("/?cursor=abc")
    assert response.status_code == 400
    assert 'href="/"' in text(response) and cast["ann"]["username"] in text(response)
    assert client.get("/?cursor=abc&partial=1").status_code == 400


@pytest.mark.parametrize("path", api_routes())
def test_every_api_route_answers_a_bad_cursor_or_limit_with_400_or_ignores_it(
    client: Client, cast: dict[str, Any], path: str
) -> None:
    api = Api.as_pinner(client, cast["ann"])
    url = fill(path, cast).removeprefix("/api/v1")
    paged = (
        client.get("/api/v1/openapi.json")
        .json()["paths"]
        .get(path.replace("<str:", "{").replace(">", "}"), {})
    )
    reads_cursor = any(
        p["name"] == "cursor" and p["in"] == "query"
        for op in paged.values()
        for p in op.get("parameters", [])
    )
    for params in [{"cursor": c} for c in BAD_CURSORS] + [
        {"limit": limit} for limit in ("0", "-1", "+5", "05", "101", "1e2", "9" * 400, "\u0665")
    ]:
        response = api.get(url, **params)
        if reads_cursor:
            error = error_of(response, 400)
            assert error["field"] == next(iter(params)), (url, params)
        else:
            assert response.status_code < 500, (url, params)


def bad_spellings(route: str, cast: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(name, spelling) for each other spelling of each ID the route names."""
    for key in re.findall(r"<str:(\w+_id)>", route):
        good = fill(f"<str:{key}>", cast)
        for spelling in [*ID_SPELLINGS, "{arabic}"]:
            yield key, spelling.format(good, arabic=good.translate(ARABIC_INDIC))


@pytest.mark.parametrize(("route", "name"), [r for r in page_routes() if "_id>" in r[0]])
def test_other_spellings_of_an_id_in_a_page_path_are_404(
    client: Client, cast: dict[str, Any], route: str, name: str
) -> None:
    log_in(client, cast["ann"])
    for key, bad in bad_spellings(route, cast):
        url = "/" + fill(route, cast, **{key: bad})
        assert client.post(url).status_code == 404, url
        assert client.get(url).status_code in (404, 405), url  # 405: a button's POST-only URL


@pytest.mark.parametrize("path", [p for p in api_routes() if "_id>" in p])
def test_other_spellings_of_an_id_in_an_api_path_are_404(
    client: Client, cast: dict[str, Any], path: str
) -> None:
    api = Api.as_pinner(client, cast["ann"])
    for key, bad in bad_spellings(path, cast):
        url = fill(path, cast, **{key: bad}).removeprefix("/api/v1")
        for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
            response = api.call(method, url, {})
            assert response.status_code in (404, 405), (method, url, response.status_code)
            if response.status_code == 404:
                error_of(response, 404)


def test_ids_in_bodies_and_queries_have_one_spelling_too(
    client: Client, cast: dict[str, Any]
) -> None:
    bob = Api.as_pinner(client, cast["bob"])
    board = str(cast["bobs"]["id"])
    for bad in ("0" + board, "+" + board, board + " "):
        response = bob.post(f"/pins/{cast['pin']}/save", {"board_id": bad})
        assert error_of(response, 404)["field"] == "board_id"
        response = bob.get(f"/users/{bob.id}/follows", ids=f"{cast['ann']['id']},{bad}")
        assert error_of(response, 400)["field"] == "ids"
    log_in(client, cast["bob"])
    client.post(f"/pin/{cast['pin']}/save/", {"board": "0" + board})
    assert (
        client.get(f"/{cast['bob']['username']}/{cast['bobs']['slug']}/").content.count(
            b'class="pin"'
        )
        == 0
    )
