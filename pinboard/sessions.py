"""Pinners' sessions: Django's cache sessions, in the ``sessions`` cache (settings.base).

One change: a session that is gone when its request ends is, for Django, a session
another request ended (a log-out), and the request fails (400) rather than bring it
back. While the session's memcached server is down, a session is gone because the
server is: that request goes on, its session lost with the server (the pinner signs
in again once it is back). A server that is up keeps Django's rule.
"""

from __future__ import annotations

from typing import Any

from django.contrib.sessions.backends.base import UpdateError
from django.contrib.sessions.backends.cache import SessionStore as CacheSessionStore


class SessionStore(CacheSessionStore):
    def save(self, must_create: bool = False) -> None:
        try:
            super().save(must_create=must_create)
        except UpdateError:
            serves: Any = getattr(self._cache, "serves", None)  # type: ignore[attr-defined]
            if serves is None or serves(self.cache_key):
                raise
