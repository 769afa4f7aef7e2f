"""What each API operation promises, declared on its handler with ``@operation(...)``.

A declaration names the success status and body schema, the request body's
schema, the query parameters' schema, whether a token is needed, and the
domain errors the handler raises. The OpenAPI document (openapi.py) is made
from these declarations and the URL patterns, and the fuzz test holds the
views to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import (
    BadRequest,
    DomainError,
    IdempotencyKeyReused,
    NotFoundError,
    ServiceUnavailable,
    TooLarge,
    Unauthenticated,
)

Handler = TypeVar("Handler", bound=Callable[..., Any])

JSON = "application/json"
MULTIPART = "multipart/form-data"


@dataclass(frozen=True)
class Operation:
    #: For people; a callable for text made from settings (read when the document is built).
    summary: str | Callable[[], str]
    status: int
    #: The success body's schema; None for a response without a body.
    response: type | None
    #: Every error the operation may answer with, those of the layer included.
    errors: tuple[type[DomainError], ...]
    auth: bool
    body: type | None
    media_type: str
    query: type | None


_DECLARED: dict[Callable[..., Any], Operation] = {}


def operation(
    summary: str | Callable[[], str],
    *,
    ok: type | None = None,
    status: int | None = None,
    errors: tuple[type[DomainError], ...] = (),
    auth: bool = False,
    body: type | None = None,
    media_type: str = JSON,
    query: type | None = None,
) -> Callable[[Handler], Handler]:
    """Declare the handler's operation. ``ok``: the success body's schema (200, or
    ``status``); without it the success is a 204. ``errors``: the domain errors the
    handler raises; those the HTTP layer adds are implied: a storage outage (503) for
    every operation, a missing or bad token (401) with ``auth``, a malformed or too
    large body (400, 413) with ``body``, malformed parameters (400) with ``query``, and
    for a handler that takes ``Idempotency-Key`` (``idempotency.idempotent``) a malformed
    key (400), one sent with another request (422), its object deleted since (404)."""
    implied: list[type[DomainError]] = [ServiceUnavailable]
    if auth:
        implied.append(Unauthenticated)
    if body is not None:
        implied += [BadRequest, TooLarge]
    if query is not None:
        implied.append(BadRequest)

    def declare(handler: Handler) -> Handler:
        keyed: list[type[DomainError]] = []
        if takes_idempotency_key(handler):  # a malformed key, one sent before, its object deleted
            keyed = [BadRequest, IdempotencyKeyReused, NotFoundError]
        _DECLARED[handler] = Operation(
            summary=summary,
            status=status or (200 if ok is not None else 204),
            response=ok,
            errors=tuple(dict.fromkeys([*errors, *implied, *keyed])),
            auth=auth,
            body=body,
            media_type=media_type,
            query=query,
        )
        return handler

    return declare


def takes_idempotency_key(handler: Callable[..., Any]) -> bool:
    """Whether the handler honours ``Idempotency-Key`` (``idempotency.idempotent`` marks it)."""
    return bool(getattr(handler, "idempotent", False))


def declared(handler: Callable[..., Any]) -> Operation:
    try:
        return _DECLARED[handler]
    except KeyError:
        name = f"{handler.__module__}.{handler.__qualname__}"
        raise LookupError(f"{name} is routed but declares no @operation") from None
