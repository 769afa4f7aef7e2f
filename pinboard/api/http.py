"""The API's HTTP layer: method dispatch, token auth, request parsing, JSON errors.

Every API view is built by ``endpoint(GET=..., POST=...)``: it dispatches on the
method (405 with ``Allow`` otherwise), is exempt from CSRF (clients send a
token, never a session cookie), and turns every refusal into
``{"error": {"code", "message", "field"?}}``. Domain errors carry their own
status; the other errors a client can provoke (a forged ID, a tampered cursor,
a malformed body) are converted by the site's one mapping (``http_errors``),
so none can surface as a 500.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any, BinaryIO, TypedDict, TypeVar, cast

import msgspec.inspect
import orjson
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from msgspec import Meta

from ..entities import User
from ..errors import BadRequest, InvalidField, MethodNotAllowed, NotFoundError, Unauthenticated
from ..http_errors import client_error, json_error
from ..ids import parse_id
from ..users.auth import PinboardRequest
from ..users.tokens import pinner_of_token
from .operations import MULTIPART

DEFAULT_LIMIT = 50
MAX_LIMIT = 100
#: JSON request bodies: the largest (a board or pin edit is well under 4 KiB) and the
#: deepest nesting of arrays and objects accepted (no operation takes more than 1).
MAX_JSON_BYTES = 64 * 1024
MAX_JSON_DEPTH = 32
_PAGE_SIZE = re.compile(r"[1-9][0-9]{0,2}", re.ASCII)
_BRACKET_OR_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)

Handler = Callable[..., HttpResponse]
Body = TypeVar("Body")


# -- responses ----------------------------------------------------------------


def ok(payload: Any, status: int = 200) -> HttpResponse:
    """JSON by orjson: several times faster than the json module on a page of 50 pins."""
    return HttpResponse(orjson.dumps(payload), status=status, content_type="application/json")


def created(payload: Any) -> HttpResponse:
    return ok(payload, status=201)


def no_content() -> HttpResponse:
    return HttpResponse(status=204)


# -- views --------------------------------------------------------------------


def endpoint(**handlers: Handler) -> Callable[..., HttpResponse]:
    """One API resource: ``handlers`` by HTTP method, errors rendered as JSON.

    Each handler declares its operation (operations.py); the view keeps them as
    ``view.handlers`` for the OpenAPI document. HEAD is answered wherever GET is,
    by the GET handler: the same status and headers; the server sends no body
    (RFC 9110 9.3.2).
    """
    documented = handlers  # HEAD is GET's, not an operation of its own
    if "GET" in handlers:
        handlers = {**handlers, "HEAD": handlers["GET"]}
    allowed = ", ".join(sorted(handlers))

    @csrf_exempt
    def view(request: HttpRequest, **kwargs: Any) -> HttpResponse:
        handler = handlers.get(request.method or "")
        if handler is None:
            response = json_error(
                MethodNotAllowed(f"{request.method} is not allowed here; use {allowed}")
            )
            response["Allow"] = allowed
            return response
        try:
            return handler(request, **kwargs)
        except Exception as exc:
            error = client_error(exc)
            if error is None:
                raise
            return json_error(error)

    view.handlers = documented  # type: ignore[attr-defined]
    return view


@csrf_exempt
def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """Any path under /api/v1/ that names no endpoint."""
    return json_error(NotFoundError(f"no API endpoint at {request.path[:200]}"))


# -- authentication -----------------------------------------------------------


def token_of(request: HttpRequest) -> str | None:
    """The token of ``Authorization: Token <token>``; None without the header."""
    header: str | None = request.META.get("HTTP_AUTHORIZATION")
    if header is None:
        return None
    keyword, _, token = header.strip().partition(" ")
    if keyword.lower() != "token" or not token.strip():
        raise Unauthenticated("send `Authorization: Token <token>`")
    return token.strip()


def optional_pinner(request: HttpRequest) -> User | None:
    """The pinner of the request's token (looked up once a request: the rate limits ask
    first); None without one, 401 for a bad one."""
    token = token_of(request)
    if token is None:
        return None
    known = cast(PinboardRequest, request)
    if known.token_pinner is None or known.token_pinner[0] != token:
        known.token_pinner = (token, pinner_of_token(token))
    pinner = known.token_pinner[1]
    if pinner is None:
        raise Unauthenticated("the token is not valid (expired, revoked or mistyped)")
    return pinner


def viewer_id(request: HttpRequest) -> int | None:
    """Who reads (secret boards show to their owner only): the token's pinner, or None."""
    pinner = optional_pinner(request)
    return pinner["id"] if pinner else None


def require_pinner(request: HttpRequest) -> User:
    pinner = optional_pinner(request)
    if pinner is None:
        raise Unauthenticated("this endpoint needs `Authorization: Token <token>`")
    return pinner


# -- request bodies and parameters --------------------------------------------


def json_body(request: HttpRequest, schema: type[Body]) -> Body:
    """The request's JSON object; 400 if it is not JSON, misses a field ``schema`` requires
    or has one it does not know. The fields' values are the actions' to check (422)."""
    content_type = request.content_type or ""
    if content_type != "application/json":
        raise BadRequest("send the body as application/json")
    too_large = BadRequest(f"JSON bodies must be at most {MAX_JSON_BYTES // 1024} KiB")
    declared = request.META.get("CONTENT_LENGTH") or ""
    declared_digits = declared.isascii() and declared.isdigit()
    if declared_digits and (len(declared) > 9 or int(declared) > MAX_JSON_BYTES):
        raise too_large  # refused before the body is read
    body = request.body
    if len(body) > MAX_JSON_BYTES:
        raise too_large
    try:
        # UTF-8 only (RFC 8259), so the depth scan below sees every bracket as one byte.
        text = body.decode() or "null"
    except UnicodeDecodeError:
        raise BadRequest("the body is not valid JSON (UTF-8)") from None
    if nested_deeper_than(text, MAX_JSON_DEPTH):
        raise BadRequest(f"JSON bodies may nest arrays and objects at most {MAX_JSON_DEPTH} deep")
    try:
        data = json.loads(text)
    except ValueError:
        raise BadRequest("the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON object")
    try:
        # JSON's \u escapes can spell lone surrogates, which no store, hash or hasher
        # accepts as text: refuse them here rather than let one reach an action.
        json.dumps(data, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        raise BadRequest("the body holds a string that is not valid Unicode") from None
    required, known = schema_fields(cast(type, schema))  # a TypedDict class: hashable
    for name in required:
        if name not in data:
            raise BadRequest(f"{name} is required", field=name)
    unknown = sorted(set(data) - known)
    if unknown:
        raise BadRequest(f"unknown field {unknown[0]!r}", field=unknown[0])
    return cast(Body, data)


def multipart_body(request: HttpRequest, schema: type, what: str) -> tuple[Any, Any]:
    """The form fields and files of a multipart request, whatever its method (Django parses
    POST bodies only); 400 for another content type or a field ``schema`` does not name."""
    if request.content_type != MULTIPART:
        raise BadRequest(f"send {what} as {MULTIPART} with an image file")
    fields: Any
    files: Any
    if request.method == "POST":
        fields, files = request.POST, request.FILES
    else:  # read from the request as a stream, as Django does for POST
        fields, files = request.parse_file_upload(request.META, cast(BinaryIO, request))
    _, known = schema_fields(schema)
    unknown = sorted((set(fields) | set(files)) - known)
    if unknown:
        raise BadRequest(f"unknown field {unknown[0]!r}", field=unknown[0])
    return fields, files


def image_file(fields: Any, files: Any, name: str = "image") -> Any:
    """The uploaded file of the form field ``name``: 400 if it is missing, 422 if it came
    as text."""
    if name not in files:
        if name in fields:
            raise InvalidField(f"{name} must be a file, not a text field", field=name)
        raise BadRequest(f"{name} is required: a JPEG, PNG, GIF or WebP file", field=name)
    return files[name]


@functools.cache
def schema_fields(schema: type) -> tuple[tuple[str, ...], frozenset[str]]:
    """A TypedDict's required fields, in the order declared, and all its fields. (msgspec
    reads ``NotRequired[...]``, which typing misses under postponed annotations.)"""
    fields = msgspec.inspect.type_info(schema).fields  # type: ignore[attr-defined]
    required = {field.name for field in fields if field.required}
    in_order = tuple(name for name in schema.__annotations__ if name in required)
    return in_order, frozenset(field.name for field in fields)


def nested_deeper_than(text: str, limit: int) -> bool:
    """Whether the JSON text nests arrays and objects more than ``limit`` deep.

    One linear pass without recursion (the json module's decoder recurses once per
    level, so a thousand ``[`` raise RecursionError): strings are skipped whole, so
    brackets inside them do not count. Malformed text may be miscounted; the decoder
    refuses it afterwards either way.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for match in _BRACKET_OR_STRING.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > limit:
                return True
        elif token in ("]", "}"):
            depth -= 1
    return False


def id_field(data: Mapping[str, Any], name: str, type_name: str) -> int:
    """A body field holding an ID: it must be a decimal string (IDs exceed 2^53)."""
    value = data.get(name)
    if not isinstance(value, str):
        raise InvalidField(f"{name} must be an ID as a decimal string", field=name)
    try:
        return parse_id(value, type_name)
    except NotFoundError:
        raise NotFoundError(f"no such {type_name}: {value[:40]!r}", field=name) from None


class PageQuery(TypedDict, total=False):
    limit: Annotated[
        int,
        Meta(
            ge=1,
            le=MAX_LIMIT,
            description=f"Page size, 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT}).",
        ),
    ]
    # shardstore's cursors are at most 64 characters.
    cursor: Annotated[
        str, Meta(min_length=1, max_length=64, description="The `next` of the previous page.")
    ]


def page_params(request: HttpRequest) -> tuple[int, str | None]:
    """``limit`` (1..100, default 50) and ``cursor`` from the query string; 400 if malformed."""
    raw = request.GET.get("limit")
    if raw is None:
        limit = DEFAULT_LIMIT
    else:
        # One spelling, as for IDs: "05", "+5" and " 5" are refused, not read as 5.
        if not _PAGE_SIZE.fullmatch(raw) or not 1 <= int(raw) <= MAX_LIMIT:
            raise BadRequest(f"limit must be an integer from 1 to {MAX_LIMIT}", field="limit")
        limit = int(raw)
    cursor = request.GET.get("cursor")
    if cursor is not None and not cursor:
        raise BadRequest("cursor must not be empty", field="cursor")
    return limit, cursor


def page(items: list[Any], cursor: str | None) -> HttpResponse:
    return ok({"items": items, "next": cursor})
