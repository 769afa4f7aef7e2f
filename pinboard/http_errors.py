"""The one mapping from errors to HTTP responses: pages, the API and the 500 handler.

``client_error`` says what an exception means to the client: a domain error (its status,
code, message and, if a retry may succeed, ``Retry-After``), or None for a bug. The API
renders it as ``{"error": {"code", "message", "field"?}}``; pages as the template of its
status (404 and 403 through Django's handlers). Both send ``Retry-After`` when the error
has one. Pages and the API word a few errors differently (a person reads one, a program
the other); the status, code and header are the same.

``ErrorResponseMiddleware`` applies it to whatever a view raises, page or API (the API's
``endpoint`` applies it first, for its own views); ``server_error`` is the site's
``handler500``. A rate limit refused before any view (``ratelimit.py``, the admin's log-in)
is rendered here too (``json_error``, ``status_page``).
"""

from __future__ import annotations

from collections.abc import Callable

import orjson
import redis
from django.core.exceptions import BadRequest as DjangoBadRequest
from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, UnreadablePostError
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import render
from django.views import defaults

from shardstore import (
    InvalidCursor,
    InvalidId,
    InvalidKey,
    KeyReused,
    NotFound,
    ObjectTooLarge,
    ShardUnavailable,
    UnknownShard,
)

from .cache_backend import CacheUnreachable
from .errors import (
    BadRequest,
    DomainError,
    Forbidden,
    IdempotencyKeyReused,
    NotFoundError,
    ServiceUnavailable,
    TooLarge,
    storage_unavailable,
)
from .search.index import IndexUnavailable

#: Seconds before a retry of what a Redis or search index that did not answer refused.
RETRY_AFTER = 5
#: The statuses pages have a template of their own for ("<status>.html").
PAGES = frozenset({400, 429, 503})


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def client_error(exc: BaseException, *, page: bool = False) -> DomainError | None:
    """The client-facing error ``exc`` stands for, or None for a bug (a 500).

    ``page``: worded for a page. Pages leave Django's own exceptions (a 404, a malformed
    request) to Django's handlers, as any Django site does; the API answers them in JSON.
    """
    if isinstance(exc, DomainError):
        return exc
    if isinstance(exc, InvalidCursor):
        if page:
            return BadRequest("This page's cursor is not one of ours: start from the first page.")
        return BadRequest("cursor is not valid; use the `next` of a previous page", field="cursor")
    if isinstance(exc, ShardUnavailable):
        return storage_unavailable(exc)
    if isinstance(exc, IndexUnavailable):
        if page:
            message = "Search is unavailable for a moment; try again shortly."
        else:
            message = "search is unavailable; try again shortly"
        return ServiceUnavailable(message, retry_after=RETRY_AFTER)
    if isinstance(exc, redis.ConnectionError | redis.TimeoutError):
        # The follower graph's or the feeds' Redis did not answer, or refused a write (this
        # process past its lease): what reached MySQL stands, and a retry is idempotent.
        if page:
            message = "That did not go through just now; try again shortly."
        else:
            message = "a server did not answer; try again shortly"
        return ServiceUnavailable(message, retry_after=RETRY_AFTER)
    if isinstance(exc, CacheUnreachable):  # a log-out whose session's Redis did not answer
        message = "You are still logged in: we could not end your session just now."
        return ServiceUnavailable(message, retry_after=RETRY_AFTER)
    if isinstance(exc, UnknownShard):  # a well-formed ID forged to name a shard no host serves
        return NotFoundError("no such object")
    if page:
        return None
    if isinstance(exc, InvalidId | NotFound | Http404):  # malformed, or of another type
        return NotFoundError("no such object")
    if isinstance(exc, InvalidKey):
        return BadRequest(str(exc))
    if isinstance(exc, KeyReused):
        return IdempotencyKeyReused(
            "this Idempotency-Key was sent before with another request; send a new key"
            " with each new request"
        )
    if isinstance(exc, RequestDataTooBig | ObjectTooLarge):
        return TooLarge("the request body is too large")
    if isinstance(exc, MultiPartParserError | UnreadablePostError):
        return BadRequest("the multipart body could not be parsed")
    if isinstance(exc, SuspiciousOperation | DjangoBadRequest):  # too many fields or files
        return BadRequest("the request was rejected as malformed")
    return None


# -- rendering ----------------------------------------------------------------------


def with_retry_after(response: HttpResponse, error: DomainError | None) -> HttpResponse:
    """``response`` with the ``Retry-After`` header when ``error`` says when to retry."""
    if error is not None and error.retry_after is not None:
        response["Retry-After"] = str(error.retry_after)
    return response


def json_error(error: DomainError) -> HttpResponse:
    detail: dict[str, str] = {"code": error.code, "message": error.message}
    if error.field:
        detail["field"] = error.field
    response = HttpResponse(
        orjson.dumps({"error": detail}), status=error.status, content_type="application/json"
    )
    return with_retry_after(response, error)


def error_page(request: HttpRequest, error: DomainError) -> HttpResponse | None:
    """The page of ``error``; None for a status pages have none of (left a 500)."""
    if isinstance(error, NotFoundError):
        raise Http404(error.message) from None
    if isinstance(error, Forbidden):
        raise PermissionDenied(error.message) from None
    return status_page(request, error) if error.status in PAGES else None


def status_page(request: HttpRequest, error: DomainError) -> HttpResponse:
    """The template of ``error``'s status (one of ``PAGES``), showing its message."""
    page = render(request, f"{error.status}.html", {"message": error.message}, status=error.status)
    return with_retry_after(page, error)


def respond(request: HttpRequest, exc: BaseException) -> HttpResponse | None:
    """The response to ``exc``: JSON under /api/, else a page; None if it is a bug."""
    api = is_api(request)
    error = client_error(exc, page=not api)
    if error is None:
        return None
    return json_error(error) if api else error_page(request, error)


class ErrorResponseMiddleware:
    """Whatever a view raises that means something to the client is answered so."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        return respond(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """The 500 handler: JSON for API clients, Django's page for browsers."""
    if is_api(request):
        body = {"error": {"code": "server_error", "message": "an unexpected error occurred"}}
        return HttpResponse(orjson.dumps(body), status=500, content_type="application/json")
    return defaults.server_error(request)
