"""Who is asking: the pinner of a browser session (API tokens: ``tokens.py``).

Pinners are not Django auth users (those are the operators' staff accounts).
A session is kept on the server (settings: ``SESSION_ENGINE``) and holds the
pinner's ID beside an HMAC of their password hash, as Django's own
``HASH_SESSION_KEY`` does: a password change alters the hash, so every other
session of that pinner stops matching and ends, without a list of sessions.

``PinnerMiddleware`` gives each request its ``request.pinner``, which reads the
session's pinner the first time it is asked for: a page that never asks reads
nothing of the store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import rotate_token
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.functional import SimpleLazyObject

from ..entities import User
from ..errors import NotFoundError
from ..ids import parse_id
from .queries import get_user

SESSION_KEY = "pinner_id"
HASH_SESSION_KEY = "pinner_hash"
_HASH_SALT = "pinboard.users.auth.session_hash"


def session_hash(user: User) -> str:
    """What a session must carry to stay valid: an HMAC of the pinner's password hash."""
    return salted_hmac(_HASH_SALT, user["password"], algorithm="sha256").hexdigest()


class LazyPinner:
    """``request.pinner``: the signed-in pinner of a browser request (None: nobody), read
    from its session at the first ``get()``, once; set at log-in and log-out."""

    def __init__(self, request: HttpRequest) -> None:
        self._request = request
        self._known = False
        self._pinner: User | None = None

    def get(self) -> User | None:
        if not self._known:
            self.set(pinner_of_session(self._request))
        return self._pinner

    def set(self, pinner: User | None) -> None:
        self._pinner, self._known = pinner, True


class PinboardRequest(HttpRequest):
    """A request as the site's middleware leaves it (Django makes the requests: this class
    is for annotations)."""

    pinner: LazyPinner
    #: The API token a request carried and its pinner, once looked up (``api.http``).
    token_pinner: tuple[str, User | None] | None


class PinnerMiddleware:
    """Each request's ``request.pinner`` (and, for the API, ``token_pinner``), asked for or
    not (they read nothing until then)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: PinboardRequest) -> HttpResponse:
        request.pinner = LazyPinner(request)
        request.token_pinner = None
        return self.get_response(request)


def _pinner_of(request: HttpRequest) -> LazyPinner:
    """``request.pinner``: every request has one (``PinnerMiddleware`` comes right after
    the session's, before any view or middleware that may ask)."""
    return cast(PinboardRequest, request).pinner


def log_in(request: HttpRequest, user: User) -> None:
    request.session.cycle_key()  # a new session ID at the privilege change
    request.session[SESSION_KEY] = str(user["id"])
    request.session[HASH_SESSION_KEY] = session_hash(user)
    rotate_token(request)  # and a new CSRF token: one planted before log-in is worthless
    _pinner_of(request).set(user)


def keep_session_after_password_change(request: HttpRequest, user: User) -> None:
    """Keep the session that changed the password (``user`` with its new hash) signed in."""
    request.session.cycle_key()
    request.session[HASH_SESSION_KEY] = session_hash(user)
    _pinner_of(request).set(user)


def log_out(request: HttpRequest) -> None:
    request.session.flush()  # deleted on the server: a copy of the cookie is worthless too
    _pinner_of(request).set(None)


def pinner_of_session(request: HttpRequest) -> User | None:
    raw = request.session.get(SESSION_KEY)
    if raw is None:
        return None
    try:
        user = get_user(parse_id(raw, "user"), counts=False)
    except NotFoundError:
        user = None
    if user is None or not constant_time_compare(
        request.session.get(HASH_SESSION_KEY, ""), session_hash(user)
    ):
        request.session.flush()  # the pinner is gone or changed their password
        return None
    return user


def get_pinner(request: HttpRequest) -> User | None:
    """The signed-in pinner of a browser request (read once per request), or None; None
    too for a request refused before ``PinnerMiddleware`` ran (a Host not served: its 400
    page is rendered all the same)."""
    pinner: LazyPinner | None = getattr(request, "pinner", None)
    return pinner.get() if pinner is not None else None


def signed_in_pinner(request: HttpRequest) -> User:
    """The pinner of a request that ``pinner_required`` let through."""
    pinner = get_pinner(request)
    if pinner is None:
        raise PermissionDenied("sign in first")  # only a view without pinner_required gets here
    return pinner


def context(request: HttpRequest) -> dict[str, Any]:
    """Template context: ``pinner``, loaded only if a template uses it."""
    return {"pinner": SimpleLazyObject(lambda: get_pinner(request))}
