"""A small JSON client for the API tests: a Django test client plus a pinner's token."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.test import Client
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

from pinboard.users.tokens import issue_token

BASE = "/api/v1"


@dataclass
class Api:
    """Calls ``/api/v1/...`` as one pinner (or anonymously with ``user=None``)."""

    client: Client
    user: dict[str, Any] | None = None
    token: str | None = None

    @classmethod
    def as_pinner(cls, client: Client, user: dict[str, Any]) -> Api:
        return cls(client, user, issue_token(user)["token"])

    @property
    def id(self) -> str:
        assert self.user is not None
        return str(self.user["id"])

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Token {self.token}"} if self.token else {}

    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
        """``body`` goes as JSON; pass ``data=`` and ``content_type=`` for anything else."""
        if body is not None:
            kwargs.setdefault("data", json.dumps(body))
            kwargs.setdefault("content_type", "application/json")
        headers = {**self.headers(), **kwargs.pop("headers", {})}
        return self.client.generic(method, BASE + path, headers=headers, **kwargs)

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(BASE + path, params, headers=self.headers())

    def post(self, path: str, body: Any = None, **kwargs: Any) -> Any:
        return self.call("POST", path, body, **kwargs)

    def patch(self, path: str, body: Any = None, **kwargs: Any) -> Any:
        return self.call("PATCH", path, body, **kwargs)

    def put(self, path: str, **kwargs: Any) -> Any:
        return self.call("PUT", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> Any:
        return self.call("DELETE", path, **kwargs)

    def upload(self, fields: dict[str, Any]) -> Any:
        """``POST /pins`` as multipart (files as ``SimpleUploadedFile``)."""
        return self.client.post(
            BASE + "/pins", fields, content_type=MULTIPART_CONTENT, headers=self.headers()
        )

    def put_avatar(self, fields: dict[str, Any]) -> Any:
        """``PUT /me/avatar`` as multipart (files as ``SimpleUploadedFile``)."""
        body = encode_multipart(BOUNDARY, fields)
        return self.call("PUT", "/me/avatar", data=body, content_type=MULTIPART_CONTENT)

    # -- shortcuts that expect success ---------------------------------------------

    def new_board(self, name: str = "Recipes", description: str = "") -> dict[str, Any]:
        response = self.post("/boards", {"name": name, "description": description})
        assert response.status_code == 201, response.content
        return response.json()

    def new_pin(self, board_id: str, image: Any, **fields: Any) -> dict[str, Any]:
        response = self.upload({"board_id": board_id, "image": image, **fields})
        assert response.status_code == 201, response.content
        return response.json()


def error_of(response: Any, status: int) -> dict[str, Any]:
    """The ``error`` object of a JSON error response with ``status``."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert set(error) <= {"code", "message", "field"} and error["message"]
    return error
