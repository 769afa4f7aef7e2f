"""JSON request bodies: one parser with a size and a nesting-depth limit, for every operation."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from pinboard.api.http import MAX_JSON_BYTES, MAX_JSON_DEPTH
from pinboard.api.openapi import build
from pinboard.boards.queries import boards_page
from tests.site.api_client import Api, error_of
from toolkit.images import image_upload


@pytest.fixture
def ada(client: Client, make_user: Callable[..., dict[str, Any]]) -> Api:
    return Api.as_pinner(client, make_user("ada"))


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def test_a_thousand_levels_is_a_400_not_a_recursion_error(client: Client, site_store: Any) -> None:
    response = Api(client).post("/auth/token", data=nested(1000), content_type="application/json")
    error = error_of(response, 400)
    assert f"at most {MAX_JSON_DEPTH} deep" in error["message"]


def test_the_depth_limit_is_exact_and_counts_objects_too(ada: Api) -> None:
    deepest = '{"name": ' + nested(MAX_JSON_DEPTH - 1) + "}"  # the outer object is level 1
    response = ada.post("/boards", data=deepest, content_type="application/json")
    assert error_of(response, 422)["field"] == "name"  # parsed; then refused as a name
    too_deep = '{"name": ' + '{"a": ' * MAX_JSON_DEPTH + "1" + "}" * MAX_JSON_DEPTH + "}"
    response = ada.post("/boards", data=too_deep, content_type="application/json")
    assert "deep" in error_of(response, 400)["message"]


def test_brackets_inside_strings_do_not_count(ada: Api) -> None:
    name = '[{\\"' + "[" * 60 + '"]}'
    body = json.dumps({"name": "Brackets " + name, "description": "{" * 300})
    response = ada.post("/boards", data=body, content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.json()["description"] == "{" * 300


def test_a_body_over_the_size_limit_is_400_and_changes_nothing(ada: Api) -> None:
    assert ada.user is not None
    body = json.dumps({"name": "Big", "description": "x" * MAX_JSON_BYTES})
    response = ada.post("/boards", data=body, content_type="application/json")
    assert f"at most {MAX_JSON_BYTES // 1024} KiB" in error_of(response, 400)["message"]
    assert boards_page(ada.user["id"]).ids == []


def test_a_body_in_another_encoding_than_utf8_is_400(ada: Api) -> None:
    body = json.dumps({"name": "Utf16"}).encode("utf-16")
    response = ada.post("/boards", data=body, content_type="application/json")
    assert error_of(response, 400)["code"] == "bad_request"


def test_huge_numbers_are_a_client_error(ada: Api) -> None:
    for number in ("9" * 5000, "1e999999", "-" + "9" * 400):
        body = '{"name": ' + number + "}"
        response = ada.post("/boards", data=body, content_type="application/json")
        assert response.status_code in (400, 422), (number[:10], response.status_code)


def _json_operations() -> list[tuple[str, str]]:
    operations = []
    for path, methods in build()["paths"].items():
        for method, operation in methods.items():
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" in content:
                operations.append((method.upper(), path))
    return operations


@pytest.mark.parametrize(("method", "path"), _json_operations())
def test_every_json_operation_refuses_deep_and_large_bodies(
    ada: Api, method: str, path: str
) -> None:
    assert ada.user is not None
    board = ada.new_board("Limits")
    pin = ada.new_pin(board["id"], image_upload())
    url = (
        path.removeprefix("/api/v1")
        .replace("{board_id}", board["id"])
        .replace("{pin_id}", pin["id"])
        .replace("{user_id}", ada.id)
    )
    deep = ada.call(method, url, data=nested(5000), content_type="application/json")
    assert "deep" in error_of(deep, 400)["message"], (method, path)
    large = json.dumps({"text": "x" * (MAX_JSON_BYTES + 1)})
    response = ada.call(method, url, data=large, content_type="application/json")
    assert "KiB" in error_of(response, 400)["message"], (method, path)
    assert boards_page(ada.user["id"]).ids == [int(board["id"])]  # nothing was made
