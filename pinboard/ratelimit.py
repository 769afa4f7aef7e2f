"""Fixed-window rate limits, kept in the ``ratelimit`` cache.

Limits are settings (``RATE_LIMITS = {"login": (count, seconds), ...}``), so
each deployment tunes them; the embedded default allows 60 a minute. Log-in and
sign-up are counted per client address (there is no pinner yet), pin creation
and avatar uploads per pinner. A refusal says when the window ends
(``RateLimited.retry_after``).
"""

from __future__ import annotations

import math
import time

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest

from .errors import RateLimited


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


def count_attempt(scope: str, who: str) -> None:
    limit, period = settings.RATE_LIMITS[scope]
    now = time.time()
    window = int(now // period)
    key = f"rl:{scope}:{who}:{window}"
    cache = caches["ratelimit"]
    cache.add(key, 0, timeout=period)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=period)
        count = 1
    if count > limit:
        retry_after = max(1, math.ceil((window + 1) * period - now))
        raise RateLimited(
            f"too many {scope} attempts; try again in {retry_after} seconds",
            retry_after=retry_after,
        )
