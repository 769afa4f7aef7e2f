"""The API's HTTP layer, as pinboard's clients see it: method dispatch, JSON errors
``{"error": {"code", "message", "field"?}}``, token auth, JSON bodies, page parameters.

IDs in paths are captured as strings, so a malformed one reaches the view and becomes
the same JSON 404 as an unknown one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from .models import ApiToken, Pinner
from .paging import InvalidCursor

DEFAULT_LIMIT = 50
MAX_LIMIT = 100
_PAGE_SIZE = re.compile(r"[1-9][0-9]{0,2}")
#: IDs have one spelling: no sign, spaces or leading zeros; at most 63 bits.
_ID = re.compile(r"[1-9][0-9]{0,18}")
_MAX_ID = 2**63 - 1

Handler = Callable[..., HttpResponse]


def json_response(payload: dict[str, Any], status: int = 200) -> HttpResponse:
    """JSON encoded by orjson, as pinboard encodes it: the comparison is about reading data."""
    return HttpResponse(orjson.dumps(payload), status=status, content_type="application/json")


class ApiError(Exception):
    """A refusal the client sees as a JSON error with ``status``."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.field = status, code, message, field

    def response(self) -> HttpResponse:
        body = {"code": self.code, "message": self.message}
        if self.field:
            body["field"] = self.field
        return json_response({"error": body}, status=self.status)


def not_found(message: str, field: str | None = None) -> ApiError:
    return ApiError(404, "not_found", message, field)


def bad_request(message: str, field: str | None = None) -> ApiError:
    return ApiError(400, "bad_request", message, field)


def invalid(message: str, field: str) -> ApiError:
    return ApiError(422, "invalid", message, field)


def forbidden(message: str) -> ApiError:
    return ApiError(403, "forbidden", message)


def endpoint(**handlers: Handler) -> Callable[..., HttpResponse]:
    """One resource: ``handlers`` by HTTP method, errors as JSON; Django refuses other
    methods (405, with ``Allow``) and answers HEAD with GET's handler. Exempt from CSRF:
    clients send a token, never a session cookie."""
    methods = [*handlers, "HEAD"] if "GET" in handlers else list(handlers)

    @csrf_exempt
    @require_http_methods(methods)
    def view(request: HttpRequest, **kwargs: Any) -> HttpResponse:
        handler = handlers["GET" if request.method == "HEAD" else str(request.method)]
        try:
            return handler(request, **kwargs)
        except ApiError as error:
            return error.response()
        except InvalidCursor:
            message = "cursor is not valid; use the `next` of a previous page"
            return bad_request(message, field="cursor").response()

    return view


@csrf_exempt
def no_endpoint(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    return not_found(f"no API endpoint at {request.path[:200]}").response()


def object_id(raw: str) -> int | None:
    """``raw`` as an ID, or None if it is not one's spelling."""
    return int(raw) if _ID.fullmatch(raw) and int(raw) <= _MAX_ID else None


def parse_id(raw: str, what: str) -> int:
    found = object_id(raw)
    if found is None:
        raise not_found(f"no such {what}")
    return found


def page(items: list[dict[str, Any]], cursor: str | None) -> HttpResponse:
    return json_response({"items": items, "next": cursor})


def page_params(request: HttpRequest) -> tuple[int, str | None]:
    """``limit`` (1..100, default 50) and ``cursor`` from the query string."""
    raw = request.GET.get("limit", str(DEFAULT_LIMIT))
    if not _PAGE_SIZE.fullmatch(raw) or not 1 <= int(raw) <= MAX_LIMIT:
        raise bad_request(f"limit must be an integer from 1 to {MAX_LIMIT}", field="limit")
    cursor = request.GET.get("cursor")
    if cursor == "":
        raise bad_request("cursor must not be empty", field="cursor")
    return int(raw), cursor


def require_pinner(request: HttpRequest) -> Pinner:
    """The pinner of ``Authorization: Token <token>``: one indexed read of the token's hash,
    with its pinner joined in. The expiry is checked on the row read: in the query, the
    time would make every query a new one to a cache of querysets."""
    keyword, _, token = request.headers.get("Authorization", "").strip().partition(" ")
    if keyword.lower() != "token" or not token.strip():
        raise ApiError(401, "unauthenticated", "this endpoint needs `Authorization: Token <token>`")
    key_hash = hashlib.sha256(token.strip().encode()).hexdigest()
    found = ApiToken.objects.select_related("user").filter(key_hash=key_hash).first()
    if found is None or found.expires_at <= timezone.now():
        raise ApiError(
            401, "unauthenticated", "the token is not valid (expired, revoked or mistyped)"
        )
    return found.user


def json_body(
    request: HttpRequest, *, required: tuple[str, ...] = (), optional: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The request's JSON object; 400 if it is not one, misses ``required`` or has unknown keys."""
    if request.content_type != "application/json":
        raise bad_request("send the body as application/json")
    try:
        data = json.loads(request.body or b"null")
    except ValueError:
        raise bad_request("the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise bad_request("the body must be a JSON object")
    for name in required:
        if name not in data:
            raise bad_request(f"{name} is required", field=name)
    unknown = sorted(set(data) - set(required) - set(optional))
    if unknown:
        raise bad_request(f"unknown field {unknown[0]!r}", field=unknown[0])
    return data


def text_field(data: dict[str, Any], name: str, *, most: int, least: int = 0) -> str:
    """A text field of at most ``most`` characters, at least ``least`` once stripped; 422
    otherwise. Returned stripped."""
    value = data.get(name)
    if not isinstance(value, str) or len(value) > most or len(value.strip()) < least:
        raise invalid(f"{name} must be {least}-{most} characters", field=name)
    return value.strip()
