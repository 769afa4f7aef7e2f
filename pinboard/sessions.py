"""Pinners' sessions: Django's cache sessions, in the ``sessions`` cache (settings.base), on
Redis with its append-only file (pinboard/cache_backend.py; process memory in the
embedded default).

Three changes, all for the moments that Redis cannot be reached (a restart: it comes
back with every session it held):

* a session that cannot be read keeps its key: for that request the visitor is signed
  out, but the cookie stays as it is (Django would take it for a session that does not
  exist, and the response would delete the cookie: a pinner who loaded a page during a
  restart of Redis would be logged out for good);
* a session that is gone when its request ends is, for Django, a session another request
  ended (a log-out), and the request fails (400) rather than bring it back. While Redis
  cannot be reached, a session is "gone" because Redis is: that request goes on, its
  changes lost (the pinner still has the session once Redis is back). A Redis that
  answers keeps Django's rule.
* a log-in (or a password change) gives the session a new key and deletes the old one;
  while Redis cannot be reached, that delete is left undone (the old key is the
  visitor's own and expires with its age) rather than fail the log-in. A log-out's delete
  is never left undone: it raises ``CacheUnreachable``, and whichever log-out it was (a
  pinner's, the console's, the admin's), the site's error mapping (``http_errors``) answers
  a 503 that says the visitor is still logged in, as they are.
"""

from __future__ import annotations

import contextlib
from typing import Any

from django.contrib.sessions.backends.base import UpdateError
from django.contrib.sessions.backends.cache import SessionStore as CacheSessionStore

from .cache_backend import CacheUnreachable


class SessionStore(CacheSessionStore):
    def load(self) -> dict[str, Any]:
        read = getattr(self._cache, "read", None)  # type: ignore[attr-defined]
        if read is None:  # the embedded default's process memory is always there
            return super().load()
        try:
            data: dict[str, Any] | None = read(self.cache_key)
        except CacheUnreachable:
            return {}  # the key kept: the session is there again once Redis is
        if data is not None:
            return data
        self._session_key = None  # as Django: an unknown key is never made a session
        return {}

    def save(self, must_create: bool = False) -> None:
        try:
            super().save(must_create=must_create)
        except UpdateError:
            serves: Any = getattr(self._cache, "serves", None)  # type: ignore[attr-defined]
            if serves is None or serves():
                raise

    def cycle_key(self) -> None:
        # What fails is the old key's delete (the new session is lost with Redis anyway).
        with contextlib.suppress(CacheUnreachable):
            super().cycle_key()
