"""Fixed-window rate limits per client address, kept in the ``ratelimit`` cache.

Limits are settings (``RATE_LIMITS = {"login": (count, seconds), ...}``), so
each deployment tunes them; the embedded default allows 60 a minute.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest

from .errors import RateLimited


def client_address(request: HttpRequest) -> str:
    # Behind the load balancer the proxy sets REMOTE_ADDR through its own
    # middleware; trusting X-Forwarded-For here would let clients pick their key.
    return request.META.get("REMOTE_ADDR", "unknown")


def check(request: HttpRequest, scope: str) -> None:
    """Count one attempt at ``scope`` from this client; RateLimited past the limit."""
    limit, period = settings.RATE_LIMITS[scope]
    window = int(time.time() // period)
    key = f"rl:{scope}:{client_address(request)}:{window}"
    cache = caches["ratelimit"]
    cache.add(key, 0, timeout=period)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=period)
        count = 1
    if count > limit:
        raise RateLimited(f"too many {scope} attempts; try again in a minute")
