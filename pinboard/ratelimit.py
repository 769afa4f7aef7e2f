"""Rate limits: sliding windows kept in the ``ratelimit`` cache, per address and per account.

Limits are settings (``RATE_LIMITS = {"login": (count, seconds), ...}``), so each
deployment tunes them; a scope the setting leaves out is not limited. Each is counted
over a sliding window: the attempts of the last ``seconds``, kept in buckets of a
twelfth of it (one ``incr`` and one multi-get an attempt), so at most the limit gets
through in any stretch of ``seconds`` less a bucket, and the window slides a bucket at a
time. A fixed window resets mid-attack instead, letting twice the limit through across
its edge.

What is counted, and under which scope:

* passwords (log-ins, the API's token, the staff log-in, and every form that asks for the
  password again): every one per client address (``login``); the wrong ones per account
  and address (``login_failures``: that address is refused at that account past it) and
  per account (``login_account``: past it, the addresses that failed at the account take
  one try at a time). An address that has not failed at an account is never refused for
  the account's sake: no one can lock a pinner or an operator out. A log-in form counts
  at the name typed, whether it names an account or not (``login_key``);
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
from collections.abc import Callable, Iterator
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse

from shardstore import ShardUnavailable

from .api.http import optional_pinner
from .errors import DomainError, RateLimited, WrongPassword, storage_unavailable
from .http_errors import is_api, json_error, status_page
from .users.auth import get_pinner

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


def login_key(login: object) -> str:
    """Where password guesses at the username or email typed on a log-in form are counted:
    the name as typed, never the account it names, so that how a username's and an email's
    counts move together cannot tell a stranger that they are one account's."""
    typed = login.strip()[:254].casefold() if isinstance(login, str) else ""
    return f"name:{hashlib.sha256(typed.encode()).hexdigest()}"


def pinner_key(pinner_id: int) -> str:
    """Where a signed-in pinner's password is counted when a form asks for it again."""
    return f"pinner:{pinner_id}"


def check_password(request: HttpRequest, account: str) -> None:
    """Before a password is tried at ``account`` (``login_key``, ``pinner_key``, a staff
    account's key): RateLimited if this address tried too many passwords (``login``), if it
    failed too often at this account (``login_failures``: per account and address), or if
    the account is under attack (``login_account``: its failures from anywhere) and this
    address is one that failed at it: then such attempts at the account go one at a time,
    ``LOGIN_SLOWED_SECONDS`` apart. An address that has not failed at the account is never
    refused for the account's sake, so no one can lock a pinner or an operator out."""
    check(request, "login")
    pair = _pair(request, account)
    failures = _counts("login_failures", pair)
    refused = _refusal_past("login_failures", failures)
    if refused is not None:
        raise refused
    failed_here = failures is None or sum(failures) > 0  # not counted: as if it had failed
    if failed_here and _refusal_past("login_account", _counts("login_account", account)):
        seconds = settings.LOGIN_SLOWED_SECONDS
        if not caches["ratelimit"].add(f"rl:slowed:{account}", 1, timeout=seconds):
            raise RateLimited(
                f"this account is being guessed at: one try every {seconds} seconds",
                retry_after=seconds,
            )


def password_failed(request: HttpRequest, account: str) -> None:
    """A wrong password at ``account`` from this address: counted for both."""
    count_attempt("login_failures", _pair(request, account), refuse=False)
    count_attempt("login_account", account, refuse=False)


@contextlib.contextmanager
def password_attempt(request: HttpRequest, account: str) -> Iterator[None]:
    """``check_password``, then the block; a ``WrongPassword`` it raises is counted."""
    check_password(request, account)
    try:
        yield
    except WrongPassword:
        password_failed(request, account)
        raise


def _pair(request: HttpRequest, account: str) -> str:
    return f"{account}|addr:{client_address(request)}"


def _counts(scope: str, who: str) -> list[int] | None:
    """``who``'s attempts at ``scope`` in each bucket of its window, newest first (None:
    the scope is not limited)."""
    if scope not in settings.RATE_LIMITS:
        return None
    keys = _keys(scope, who)
    found = caches["ratelimit"].get_many(keys)
    return [int(found.get(key) or 0) for key in keys]


def _refusal_past(scope: str, counts: list[int] | None) -> RateLimited | None:
    """The refusal the next attempt at ``scope`` would get with these ``counts``, if any."""
    if counts is None or sum(counts) < settings.RATE_LIMITS[scope][0]:
        return None
    return _refusal_of(scope, counts, settings.RATE_LIMITS[scope])


def count_attempt(scope: str, who: str, *, refuse: bool = True) -> None:
    """Count one attempt at ``scope`` by ``who``; RateLimited past the limit (the attempt
    then not counted), unless ``refuse`` is off (a failure is counted whatever it says)."""
    limit = settings.RATE_LIMITS.get(scope)
    if limit is None:
        return
    allowed, period = limit
    size = period / BUCKETS
    keys = _keys(scope, who)
    cache = caches["ratelimit"]
    cache.add(keys[0], 0, timeout=math.ceil(period + size))
    try:
        current = cache.incr(keys[0])
    except ValueError:  # expired between add and incr
        cache.set(keys[0], 1, timeout=math.ceil(period + size))
        current = 1
    older = cache.get_many(keys[1:])
    counts = [current] + [int(older.get(key) or 0) for key in keys[1:]]
    if not refuse or sum(counts) <= allowed:
        return
    with contextlib.suppress(ValueError):  # a refusal is not an attempt let through
        cache.decr(keys[0])
    counts[0] -= 1
    raise _refusal_of(scope, counts, limit)


def _keys(scope: str, who: str) -> list[str]:
    """The keys of ``who``'s buckets at ``scope``, newest first."""
    _allowed, period = settings.RATE_LIMITS[scope]
    bucket = int(time.time() // (period / BUCKETS))
    return [f"rl:{scope}:{who}:{bucket - age}" for age in range(BUCKETS)]


def _refusal_of(scope: str, counts: list[int], limit: tuple[int, int]) -> RateLimited:
    allowed, period = limit
    size, now = period / BUCKETS, time.time()
    bucket = int(now // size)
    retry_after = max(1, math.ceil(_one_more_at(counts, allowed, bucket, size) - now))
    return RateLimited(
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
        except ShardUnavailable as down:  # the pinner's shard: the view would meet it too
            return _refusal(request, storage_unavailable(down))
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


def _refusal(request: HttpRequest, refused: DomainError) -> HttpResponse:
    return json_error(refused) if is_api(request) else status_page(request, refused)
