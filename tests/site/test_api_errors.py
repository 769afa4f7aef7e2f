"""The API's common rules: JSON errors, IDs as strings, pagination, methods, the document."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from pinboard.pins.actions import create_pin
from shardstore import compose
from tests.site.api_client import Api, error_of
from toolkit.images import image_upload


@pytest.fixture
def anon(client: Client, site_store: Any) -> Api:
    return Api(client)


@pytest.fixture
def ada(client: Client, make_user: Callable[..., dict[str, Any]]) -> Api:
    return Api.as_pinner(client, make_user("ada"))


# -- malformed requests ------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        ("{not json", "application/json"),
        ('["a", "list"]', "application/json"),
        ("\xff\xfe", "application/json"),
        ("", "application/json"),
        ('{"name": "lone \\udbfd surrogate"}', "application/json"),
        ('{"name": "x"}', "text/plain"),
        ("name=x", "application/x-www-form-urlencoded"),
    ],
)
def test_a_malformed_body_is_400(ada: Api, data: str, content_type: str) -> None:
    response = ada.post("/boards", data=data.encode("latin-1"), content_type=content_type)
    assert error_of(response, 400)["code"] == "bad_request"


def test_wrong_method_is_a_json_405_with_allow(anon: Api, ada: Api) -> None:
    board = ada.new_board()
    response = anon.call("POST", f"/boards/{board['id']}")
    assert error_of(response, 405)["code"] == "method_not_allowed"
    assert response["Allow"] == "DELETE, GET, HEAD, PATCH"
    assert error_of(anon.call("GET", "/auth/token"), 405)


@pytest.mark.parametrize("path", ["/", "/nope", "/users/1/nope", "/boards/", "/pins/1/x/y"])
def test_unknown_api_paths_are_json_404(anon: Api, path: str) -> None:
    for method in ("GET", "POST", "DELETE"):
        assert error_of(anon.call(method, path), 404)["code"] == "not_found"


# -- IDs -----------------------------------------------------------------------------


def test_ids_are_decimal_strings_beyond_2_53(ada: Api, anon: Api) -> None:
    board = ada.new_board()
    pin = ada.new_pin(board["id"], image_upload())
    for obj, fields in ((board, ("id", "owner_id")), (pin, ("id", "board_id", "owner_id"))):
        for field in fields:
            assert isinstance(obj[field], str) and obj[field].isdigit()
    # An ID on a high shard is past 2^53 and must survive the trip exactly.
    big = compose(4000, 1, 123456789)
    assert big > 2**53
    raw = anon.get(f"/pins/{big}")
    assert error_of(raw, 404)  # shard 4000 is not in the test topology: still a 404
    text = anon.get(f"/users/{ada.id}").content.decode()
    assert f'"id":"{ada.id}"' in text  # a string in the raw text, not a number


@pytest.mark.parametrize(
    "path",
    [
        "/users/{bad}",
        "/users/{bad}/boards",
        "/users/{bad}/followers",
        "/users/{bad}/following",
        "/boards/{bad}",
        "/boards/{bad}/pins",
        "/pins/{bad}",
        "/pins/{bad}/likes",
        "/pins/{bad}/comments",
    ],
)
def test_malformed_wrong_type_or_unknown_ids_are_404(anon: Api, ada: Api, path: str) -> None:
    wrong_type = ada.id if not path.startswith("/users") else ada.new_board()["id"]
    unknown = {"/users": compose(1, 3, 999_999), "/boards": compose(1, 2, 999_999)}.get(
        path.split("/{")[0], compose(1, 1, 999_999)
    )
    for bad in ("abc", "-1", "1.5", "9" * 30, wrong_type, unknown, compose(9999, 1, 1)):
        response = anon.get(path.format(bad=bad))
        assert error_of(response, 404)["code"] == "not_found", (path, bad)


def test_write_endpoints_404_on_bad_ids(ada: Api) -> None:
    for method, path in [
        ("PATCH", "/boards/x"),
        ("DELETE", "/boards/x"),
        ("PUT", "/boards/x/follow"),
        ("DELETE", "/boards/x/follow"),
        ("PATCH", "/pins/x"),
        ("DELETE", "/pins/x"),
        ("POST", "/pins/x/save"),
        ("PUT", "/pins/x/like"),
        ("DELETE", "/pins/x/like"),
        ("POST", "/pins/x/comments"),
        ("PUT", "/users/x/follow"),
        ("DELETE", "/users/x/follow"),
    ]:
        body = {"board_id": "1"} if path.endswith("save") else {"text": "hi"}
        if method == "PATCH":
            body = {}
        response = ada.call(method, path, body if method in ("POST", "PATCH") else None)
        assert error_of(response, 404)["code"] == "not_found", (method, path)


# -- pagination ----------------------------------------------------------------------


def test_cursor_pagination_walks_every_item_once(anon: Api, ada: Api) -> None:
    board = ada.new_board()
    assert ada.user is not None
    pins = [
        str(create_pin(ada.user["id"], int(board["id"]), image_upload())["id"]) for _ in range(5)
    ]
    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        response = anon.get(f"/boards/{board['id']}/pins", **params)
        assert response.status_code == 200
        body = response.json()
        assert len(body["items"]) <= 2
        seen += [p["id"] for p in body["items"]]
        pages += 1
        cursor = body["next"]
        if cursor is None:
            break
        assert isinstance(cursor, str)
    assert seen == pins[::-1] and pages == 3
    assert len(anon.get(f"/boards/{board['id']}/pins").json()["items"]) == 5  # default 50


@pytest.mark.parametrize("limit", ["0", "101", "-1", "abc", "1.5", ""])
def test_a_bad_limit_is_400(anon: Api, ada: Api, limit: str) -> None:
    error = error_of(anon.get(f"/users/{ada.id}/boards", limit=limit), 400)
    assert error["field"] == "limit"


@pytest.mark.parametrize("cursor", ["garbage!", "Zm9vOmJhcg", "", "x" * 65])
def test_a_bad_cursor_is_400(anon: Api, ada: Api, cursor: str) -> None:
    error = error_of(anon.get(f"/users/{ada.id}/followers", cursor=cursor), 400)
    assert error["field"] == "cursor"


def test_limit_100_is_allowed(anon: Api, ada: Api) -> None:
    assert anon.get(f"/users/{ada.id}/following", limit="100").json() == {
        "items": [],
        "next": None,
    }


# -- the OpenAPI document ------------------------------------------------------------


def _api_routes() -> set[str]:
    """Every route under /api/v1/ as an OpenAPI path ("/api/v1/pins/{pin_id}")."""
    resolver = get_resolver()
    (api,) = [
        p
        for p in resolver.url_patterns
        if isinstance(p, URLResolver) and str(p.pattern) == "api/v1/"
    ]
    routes = set()
    for pattern in api.url_patterns:
        assert isinstance(pattern, URLPattern)
        route = str(pattern.pattern)
        if route and route != "openapi.json":
            routes.add("/api/v1/" + route.replace("<str:", "{").replace(">", "}"))
    return routes


def test_the_document_describes_every_route(anon: Api) -> None:
    response = anon.get("/openapi.json")
    assert response.status_code == 200
    document = json.loads(response.content)
    assert document["openapi"].startswith("3.")
    assert set(document["paths"]) == _api_routes()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            assert any(code.startswith("2") for code in responses), (method, path)
            if operation["security"]:
                assert "401" in responses, (method, path)
            if "{" in path:
                assert "404" in responses, (method, path)


def test_every_route_and_method_has_an_operation_and_every_operation_a_route(anon: Api) -> None:
    """The methods as the views answer them: the ``Allow`` of a 405 (HEAD goes with GET)."""
    documented = {
        path: set(operations)
        for path, operations in json.loads(anon.get("/openapi.json").content)["paths"].items()
    }
    answered = {}
    for route in _api_routes():
        # Any value fills a path parameter: a wrong method is refused before it is read.
        url = route.removeprefix("/api/v1").replace("{", "").replace("}", "")
        response = anon.call("TRACE", url)
        assert error_of(response, 405)["code"] == "method_not_allowed", route
        allowed = set(response["Allow"].split(", "))
        assert ("HEAD" in allowed) == ("GET" in allowed), (route, allowed)
        answered[route] = {method.lower() for method in allowed - {"HEAD"}}
    assert documented == answered
