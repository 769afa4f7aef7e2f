"""Domain errors: what an action refuses, and the HTTP status each one means.

Actions raise these; the API turns them into ``{"error": {"code", "message"}}``
and the pages into a message or a 404. Nothing a client sends should surface
as anything else.
"""

from __future__ import annotations

from shardstore import ShardReadOnly, ShardUnavailable


class DomainError(Exception):
    status = 400
    code = "bad_request"
    #: Seconds after which a retry may succeed (the ``Retry-After`` header), if it may.
    retry_after: int | None = None

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class BadRequest(DomainError):
    """The request itself is malformed: bad JSON, wrong content type, missing field."""


class NotFoundError(DomainError):
    """Unknown ID, or an ID that is malformed or of the wrong type."""

    status = 404
    code = "not_found"


class Forbidden(DomainError):
    """The object exists but is not the actor's to change."""

    status = 403
    code = "forbidden"


class Conflict(DomainError):
    """A unique name (username, email) is taken."""

    status = 409
    code = "conflict"


class InvalidField(DomainError):
    """A field's value is not acceptable; ``field`` names it."""

    status = 422
    code = "invalid"


class IdempotencyKeyReused(DomainError):
    """An ``Idempotency-Key`` sent again with another request than the one it was first
    sent with (``api/idempotency.py``); nothing was written."""

    status = 422
    code = "idempotency_key_reused"


class WrongPassword(InvalidField):
    """The password given is not the account's (``ratelimit.password_attempt`` counts it)."""


class TooLarge(DomainError):
    status = 413
    code = "too_large"


class CouldNotFetch(DomainError):
    """An image to pin could not be fetched from the URL given for it (the address is not
    public, the server failed or was too slow, what it sent is not an image, ...)."""

    code = "could_not_fetch"

    def __init__(self, reason: str, *, field: str = "source_url") -> None:
        super().__init__(f"could not fetch the image: {reason}", field=field)


class Unauthenticated(DomainError):
    status = 401
    code = "unauthenticated"


class RateLimited(DomainError):
    """Too many attempts in the current window; ``retry_after`` is the seconds until it ends
    (sent as the ``Retry-After`` header with every 429, page or API)."""

    status = 429
    code = "rate_limited"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class MethodNotAllowed(DomainError):
    status = 405
    code = "method_not_allowed"


class ServiceUnavailable(DomainError):
    """A shard's host (or another server) is down, or the shard is changing hands;
    nothing was written, and the client may retry after ``retry_after`` seconds."""

    status = 503
    code = "unavailable"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def storage_unavailable(exc: ShardUnavailable) -> ServiceUnavailable:
    """The 503 for a shard that cannot take a request now (nothing was written)."""
    if isinstance(exc, ShardReadOnly):
        return ServiceUnavailable(
            "this data is moving to another server; try again in a moment",
            retry_after=exc.retry_after,
        )
    return ServiceUnavailable("storage is unavailable; try again shortly", retry_after=5)
