"""Rate limits: sliding windows kept in the ``ratelimit`` cache, per address and per account.

Limits are settings (``RATE_LIMITS = {"login": (count, seconds), ...}``), so each
deployment tunes them; a scope the setting leaves out is not limited. Each is counted
over a sliding window: the attempts of the last ``seconds``, kept in buckets of a
twelfth of it (one ``incr`` and one multi-get an attempt), so at most the limit gets
through in any stretch of ``seconds`` less a bucket, and the window slides a bucket at a
time. A fixed window resets mid-attack instead, letting twice the limit through across
its edge.

What is counted, and under which scope:

* log-ins (and every form that asks for the password again: a password change, an
  account's deletion), per client address (``login``) and per account tried
  (``login_account``, whether it exists or not, so a refusal tells nothing);
* sign-ups per address (``signup``); pins and saves (``pin``) and avatars (``avatar``)
  per pinner, as their views say;
* every write (any POST, PUT, PATCH or DELETE: comments, follows, likes, invitations...;
  but a log-out, never refused) per address (``write_address``) and per signed-in pinner
  (``write``), and every search per address (``search_address``) and per pinner
  (``search``), by ``RateLimitMiddleware``.

A refusal says when to retry (``RateLimited.retry_after``): when enough of the oldest
attempts will have left the window to let one more through, at most ``seconds``. A
refused attempt is not counted, so a client that waits as told gets in.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse

from .api.http import optional_pinner
from .errors import DomainError, RateLimited
from .http_errors import is_api, json_error, status_page
from .users.auth import get_pinner
from .users.queries import user_id_for

#: A window is counted in this many buckets (5 s each of a minute): every bucket of the
#: last ``seconds`` counts, so it slides a bucket at a time and never resets at once.
BUCKETS = 12
UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
SEARCHES = ("search", "api-search")  # URL names: the page's, the API's


def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or the header ``CLIENT_ADDRESS_HEADER`` names
    where a proxy on the same host sets it (production: nginx's X-Real-IP, which it
    derives from the load balancer's X-Forwarded-For). A header a client could send
    itself is never trusted otherwise: it would let clients pick their own key."""
    header = getattr(settings, "CLIENT_ADDRESS_HEADER", None)
    address = request.META.get(header) if header else None
    return str(address or request.META.get("REMOTE_ADDR", "unknown"))


def check(request: HttpRequest, scope: str) -> None:
    """Count one attempt at ``scope`` from this client; RateLimited past the limit."""
    count_attempt(scope, f"addr:{client_address(request)}")


def check_pinner(pinner_id: int, scope: str) -> None:
    """Count one attempt at ``scope`` by this pinner, wherever they connect from."""
    count_attempt(scope, f"pinner:{pinner_id}")


def check_login(request: HttpRequest, account: object) -> None:
    """Count one password tried, from this address and at this account: a user ID, or the
    username or email typed (an account that does not exist is counted all the same)."""
    check(request, "login")
    count_attempt("login_account", account_key(account))


def account_key(account: object) -> str:
    """Who a password was tried at: a user ID, or the username or email typed (its user's
    ID if it names one, so that both names of an account share its count)."""
    if isinstance(account, str):
        login = account.strip()[:254]
        user_id = user_id_for("email" if "@" in login else "username", login) if login else None
        if user_id:
            return f"account:{user_id}"
        return f"name:{hashlib.sha256(login.casefold().encode()).hexdigest()}"  # a safe key
    return f"account:{account}"


def count_attempt(scope: str, who: str) -> None:
    limit = settings.RATE_LIMITS.get(scope)
    if limit is None:
        return
    allowed, period = limit
    size = period / BUCKETS
    now = time.time()
    bucket = int(now // size)
    keys = [f"rl:{scope}:{who}:{bucket - age}" for age in range(BUCKETS)]  # newest first
    cache = caches["ratelimit"]
    cache.add(keys[0], 0, timeout=math.ceil(period + size))
    try:
        current = cache.incr(keys[0])
    except ValueError:  # expired between add and incr
        cache.set(keys[0], 1, timeout=math.ceil(period + size))
        current = 1
    older = cache.get_many(keys[1:])
    counts = [current] + [int(older.get(key) or 0) for key in keys[1:]]
    if sum(counts) <= allowed:
        return
    with contextlib.suppress(ValueError):  # a refusal is not an attempt let through
        cache.decr(keys[0])
    counts[0] -= 1
    retry_after = max(1, math.ceil(_one_more_at(counts, allowed, bucket, size) - now))
    raise RateLimited(
        f"too many {scope.split('_')[0]} attempts; try again in {retry_after} seconds",
        retry_after=retry_after,
    )


def _one_more_at(counts: list[int], allowed: int, bucket: int, size: float) -> float:
    """When enough of the oldest buckets will have left the window to let one more in."""
    to_leave = sum(counts) - allowed + 1
    for age in range(BUCKETS - 1, -1, -1):  # the oldest first
        to_leave -= counts[age]
        if to_leave <= 0:
            return (bucket - age + BUCKETS) * size
    return (bucket + BUCKETS) * size


class RateLimitMiddleware:
    """Counts every write and every search, per address and per signed-in pinner, before
    the view runs; a refusal is a 429 with ``Retry-After`` (JSON under /api/)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, *args: Any) -> HttpResponse | None:
        match = request.resolver_match
        name = match.url_name if match else None
        if is_log_out(name, request.method):
            return None
        scope = "write" if request.method in UNSAFE else "search" if name in SEARCHES else None
        if scope is None:
            return None
        try:
            check(request, f"{scope}_address")
            pinner_id = _pinner_id(request)
            if pinner_id is not None:
                check_pinner(pinner_id, scope)
        except RateLimited as refused:
            return _refusal(request, refused)
        return None


def is_log_out(url_name: str | None, method: str | None) -> bool:
    """Logging out (ending a session, revoking a token) is never refused."""
    return url_name == "logout" or (url_name == "api-token" and method == "DELETE")


def _pinner_id(request: HttpRequest) -> int | None:
    """The signed-in pinner's ID: the API token's, or the browser session's."""
    if is_api(request):
        try:
            pinner = optional_pinner(request)
        except DomainError:  # a bad token: the view answers 401
            return None
    else:
        pinner = get_pinner(request)
    return int(pinner["id"]) if pinner else None


def _refusal(request: HttpRequest, refused: RateLimited) -> HttpResponse:
    return json_error(refused) if is_api(request) else status_page(request, refused)
