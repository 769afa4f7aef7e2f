"""Who is asking: the pinner of a browser session or of an API token.

Pinners are not Django auth users (those are the operators' staff accounts):
a session holds the pinner's ID, and an API token is a signed
``(user id, token version)`` pair that ``revoke_tokens`` invalidates.
"""

from __future__ import annotations

from typing import Any

from django.core import signing
from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from ..errors import NotFoundError
from ..ids import parse_id
from .queries import get_user

SESSION_KEY = "pinner_id"
TOKEN_SALT = "pinboard.api.token"


def log_in(request: HttpRequest, user: dict[str, Any]) -> None:
    request.session.cycle_key()  # a new session ID at the privilege change
    request.session[SESSION_KEY] = str(user["id"])
    request._pinner = user  # type: ignore[attr-defined]


def log_out(request: HttpRequest) -> None:
    request.session.flush()
    request._pinner = None  # type: ignore[attr-defined]


def pinner_of_session(request: HttpRequest) -> dict[str, Any] | None:
    raw = request.session.get(SESSION_KEY)
    if raw is None:
        return None
    try:
        return get_user(parse_id(raw, "user"), counts=False)
    except NotFoundError:
        return None


def issue_token(user: dict[str, Any]) -> str:
    return signing.dumps({"u": str(user["id"]), "v": user.get("token_version", 1)}, salt=TOKEN_SALT)


def pinner_of_token(token: str) -> dict[str, Any] | None:
    try:
        payload = signing.loads(token, salt=TOKEN_SALT)
        user = get_user(parse_id(payload["u"], "user"), counts=False)
    except (signing.BadSignature, KeyError, TypeError, NotFoundError):
        return None
    if user is None or user.get("token_version", 1) != payload.get("v"):
        return None
    return user


_UNSET = object()


def get_pinner(request: HttpRequest) -> dict[str, Any] | None:
    """The signed-in pinner of a browser request (read once per request), or None."""
    pinner = getattr(request, "_pinner", _UNSET)
    if pinner is _UNSET:
        pinner = pinner_of_session(request)
        request._pinner = pinner  # type: ignore[attr-defined]
    return pinner  # type: ignore[return-value]


def context(request: HttpRequest) -> dict[str, Any]:
    """Template context: ``pinner``, loaded only if a template uses it."""
    return {"pinner": SimpleLazyObject(lambda: get_pinner(request))}
