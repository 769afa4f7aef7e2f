"""The ID of the request being served, which every log line of the request carries.

A request takes its ID from the client's ``X-Request-ID`` when that is short and plain
(at most 64 characters of ``A-Z a-z 0-9 . _ -``, so it cannot forge a log line or stuff
one), else a new one (a uuid4, hex); ``request_log.RequestLogMiddleware`` binds it for
the request and sends it back in the response's ``X-Request-ID``. A Celery task queued
meanwhile carries it in its message's ``TASK_HEADER`` and binds it while it runs
(``pinboard/celery.py``), so the task's lines, and those of the tasks it queues in turn,
carry it too. A ``ContextVar`` keeps it apart per thread (gunicorn's threads, a worker's
tasks). No Django here: the logging filter and Celery's signals read it too.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token

#: The HTTP header a client may send and the response always carries.
HEADER = "X-Request-ID"
#: The Celery message header that carries the ID to a task (a name of the site's own:
#: Celery puts a message's headers among its request's fields).
TASK_HEADER = "pinboard_request_id"

_WELL_FORMED = re.compile(r"[A-Za-z0-9._-]{1,64}")
_current: ContextVar[str | None] = ContextVar("pinboard_request_id", default=None)


def current() -> str | None:
    """The ID of the request or task being served here, or None outside one."""
    return _current.get()


def well_formed(value: str | None) -> bool:
    return value is not None and _WELL_FORMED.fullmatch(value) is not None


def from_client(value: str | None) -> str:
    """The client's ID when it is well formed, else a new one."""
    return value if value is not None and well_formed(value) else new()


def new() -> str:
    return uuid.uuid4().hex


def bind(value: str | None) -> Token[str | None]:
    """Make ``value`` the current ID; ``unbind`` with the token puts the one before back."""
    return _current.set(value)


def unbind(token: Token[str | None]) -> None:
    _current.reset(token)


@contextmanager
def bound(value: str | None) -> Iterator[None]:
    token = bind(value)
    try:
        yield
    finally:
        unbind(token)
