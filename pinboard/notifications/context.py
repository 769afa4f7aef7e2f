"""The header's unread count, on every page that shows the header to a pinner."""

from __future__ import annotations

import logging
from typing import Any

import redis
from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from ..users.auth import get_pinner
from .queries import unread_count, unread_label

log = logging.getLogger(__name__)


def unread(request: HttpRequest) -> dict[str, Any]:
    """``unread_notifications``: "" or "3" or "99+", read (one Redis call, no SQL) only if
    the template shows it, and then only for a signed-in pinner. A Redis that does not
    answer shows no count rather than failing a page that needs nothing else of it."""

    def label() -> str:
        pinner = get_pinner(request)
        if pinner is None:
            return ""
        try:
            return unread_label(unread_count(pinner["id"]))
        except redis.RedisError as error:
            log.warning("no unread count for pinner %s: %s", pinner["id"], error)
            return ""

    return {"unread_notifications": SimpleLazyObject(label)}
