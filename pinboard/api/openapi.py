"""The OpenAPI 3.1 document of the JSON API v1, served at /api/v1/openapi.json.

Generated, never written by hand: the paths and methods come from the URL
patterns and the ``endpoint`` views they route to, each operation from its
handler's ``@operation`` declaration (operations.py), and every schema from
the TypedDicts that handlers and serializers are typed with, by msgspec. The
fuzz test (tests/site/test_api_fuzz.py) checks each response's status and body
against this document, so a drift between it and the views fails the suite.
"""

from __future__ import annotations

import functools
import re
import typing
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
from django.http import HttpRequest, JsonResponse
from django.urls import URLResolver, get_resolver, reverse

from ..errors import RateLimited
from ..image_files import MAX_BYTES
from ..ratelimit import SEARCHES, UNSAFE, is_log_out
from . import idempotency
from .http import MAX_JSON_BYTES, MAX_JSON_DEPTH, endpoint, not_found, schema_fields
from .operations import JSON, Operation, declared, takes_idempotency_key
from .schemas import Error
from .views.auth import token_lifetime

SCHEMA_REF = "#/components/schemas/{name}"
_PATH_PARAMETER = re.compile(r"<(?:\w+:)?(\w+)>")

#: What each error status means, for people; every status an operation declares needs one.
ERRORS = {
    400: "Malformed request: not JSON, wrong content type, a missing or unknown field,"
    f" a bad `limit` or `cursor`, a JSON body over {MAX_JSON_BYTES // 1024} KiB or nested"
    f" more than {MAX_JSON_DEPTH} deep; or an image that could not be fetched from the"
    " `source_url` given for it (`could_not_fetch`); or a malformed `Idempotency-Key`.",
    401: "No token, or a bad one (`Authorization: Token <token>`).",
    403: "The object is not yours.",
    404: "Unknown ID, or an ID that is malformed or of another type; or, for a create sent"
    " again with its `Idempotency-Key`, the object it made has been deleted since.",
    409: "The username or email is taken.",
    413: f"Too large: an image over {MAX_BYTES // (1024 * 1024)} MB, or the request body.",
    422: "A field's value is invalid; `error.field` names it. Or an `Idempotency-Key` sent"
    " before with another request (`idempotency_key_reused`): nothing was written.",
    429: "Too many attempts over a sliding window: log-ins per client address and per"
    " account, sign-ups per address, new and saved pins and avatar uploads per pinner, every"
    " write and search per address and per pinner; `Retry-After` says how many seconds"
    " until one more is let through.",
    503: "A storage host is unavailable, or the data is moving to another host; nothing"
    " was written. `Retry-After` says when to try again.",
}

#: Headers that come with an error status, by status.
ERROR_HEADERS = {
    429: {
        "Retry-After": {
            "description": "Seconds until the rate limit lets one more attempt through.",
            "required": True,
            "schema": {"type": "integer", "minimum": 1},
        }
    },
    503: {
        "Retry-After": {
            "description": "Seconds after which the request may succeed.",
            "required": True,
            "schema": {"type": "integer", "minimum": 1},
        }
    },
}

TOKEN_AUTH: list[dict[str, list[str]]] = [{"token": []}]


@functools.cache
def build() -> dict[str, Any]:
    """The document (built once per process)."""
    operations = list(api_operations())
    named: list[type] = [Error]  # each gets a component, named after it
    for *_, op in operations:
        named += [t for t in (op.response, op.body) if t is not None and t not in named]
    refs, schemas = msgspec.json.schema_components(named, ref_template=SCHEMA_REF)
    ref_of = dict(zip(named, refs, strict=True))
    for body in {op.body for *_, op in operations if op.body is not None}:
        # json_body and the multipart upload refuse a field their schema does not name.
        schemas[ref_of[body]["$ref"].rsplit("/", 1)[1]]["additionalProperties"] = False
    paths: dict[str, dict[str, Any]] = {}
    statuses: set[int] = set()
    for path, method, handler, op in operations:
        paths.setdefault(path, {})[method] = operation_object(path, method, handler, op, ref_of)
        statuses |= error_statuses(path, method, op)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "pinboard API",
            "version": "1",
            "description": "Pins, boards, likes, comments and follows, stored in the"
            " ID-sharded store. IDs are decimal strings. Lists return"
            ' `{"items": [...], "next": cursor | null}`. Every error is'
            ' `{"error": {"code", "message", "field"?}}`; a wrong method is a 405 with'
            " `Allow`. Endpoints marked with the token scheme need"
            " `Authorization: Token <token>` (from `POST /api/v1/auth/token`);"
            " the others ignore the header. A token expires after"
            f" {token_lifetime()}; `DELETE /api/v1/auth/token` revokes it, and a password"
            " change revokes all of the pinner's tokens. HEAD is answered wherever GET is."
            " The creates take an `Idempotency-Key` header: a create sent again with its key"
            " (after no answer or a 503) is answered with the object the first attempt made,"
            " never a second one.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "responses": {
                f"E{status}": {
                    "description": ERRORS[status],
                    "content": {JSON: {"schema": ref_of[Error]}},
                    **({"headers": ERROR_HEADERS[status]} if status in ERROR_HEADERS else {}),
                }
                for status in sorted(statuses)
            },
            "securitySchemes": {
                "token": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "Authorization",
                    "description": "`Token <token>`, from `POST /api/v1/auth/token`; valid for"
                    f" {token_lifetime()} unless revoked.",
                }
            },
        },
    }


def api_operations() -> Iterator[tuple[str, str, Callable[..., Any], Operation]]:
    """(path, method, handler, operation) for each method of each API route, in URL order:
    the site's URL patterns under the API's prefix whose views ``endpoint`` built."""
    prefix = reverse("api-openapi").removesuffix("openapi.json")
    for route, callback in _routes(get_resolver().url_patterns, "/"):
        if not route.startswith(prefix) or callback in (document, not_found):
            continue
        path = _PATH_PARAMETER.sub(r"{\1}", route)
        for method, handler in getattr(callback, "handlers", {}).items():
            yield path, method.lower(), handler, declared(handler)


def _routes(patterns: list[Any], prefix: str) -> Iterator[tuple[str, Callable[..., Any]]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern), pattern.callback


def error_statuses(path: str, method: str, op: Operation) -> set[int]:
    """The error statuses an operation may answer: its own errors', and a 429 for every
    write and search (``ratelimit.RateLimitMiddleware`` counts them all)."""
    searches = path == reverse(SEARCHES[1])
    write = method.upper() in UNSAFE and not is_log_out(_url_name(path), method.upper())
    limited = searches or write
    return {error.status for error in op.errors} | ({RateLimited.status} if limited else set())


def _url_name(path: str) -> str | None:
    match = get_resolver().resolve(re.sub(r"{\w+}", "0", path))
    return match.url_name


def operation_object(
    path: str, method: str, handler: Callable[..., Any], op: Operation, ref_of: dict[type, Any]
) -> dict[str, Any]:
    summary = op.summary() if callable(op.summary) else op.summary
    success: dict[str, Any] = {"description": summary}
    if op.response is not None:
        success["content"] = {JSON: {"schema": ref_of[op.response]}}
    responses = {str(op.status): success}
    for status in sorted(error_statuses(path, method, op)):
        responses[str(status)] = {"$ref": f"#/components/responses/E{status}"}
    result: dict[str, Any] = {"summary": summary, "responses": responses}
    # A path parameter's schema is its handler argument's type.
    hints = typing.get_type_hints(handler, include_extras=True)
    parameters = [
        parameter(name, "path", hints[name], required=True) for name in re.findall(r"{(\w+)}", path)
    ]
    if op.query is not None:
        required, _ = schema_fields(op.query)
        parameters += [
            parameter(name, "query", annotation, required=name in required)
            for name, annotation in typing.get_type_hints(op.query, include_extras=True).items()
        ]
    if takes_idempotency_key(handler):
        parameters.append(dict(idempotency.header_parameter()))
    if parameters:
        result["parameters"] = parameters
    if op.body is not None:
        content = {op.media_type: {"schema": ref_of[op.body]}}
        result["requestBody"] = {"required": True, "content": content}
    result["security"] = TOKEN_AUTH if op.auth else []
    return result


def parameter(name: str, location: str, annotation: Any, *, required: bool) -> dict[str, Any]:
    if typing.get_origin(annotation) in (typing.Required, typing.NotRequired):
        (annotation,) = typing.get_args(annotation)
    schema = msgspec.json.schema(annotation)
    description = schema.pop("description", None)
    result = {"name": name, "in": location, "required": required}
    if description:
        result["description"] = description
    return {**result, "schema": schema}


def _document(request: HttpRequest) -> JsonResponse:
    return JsonResponse(build())


document = endpoint(GET=_document)
