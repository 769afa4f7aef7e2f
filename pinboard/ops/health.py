"""``/healthz``: what a load balancer and the propagation tests ask of each process.

It answers whether the process is up and which version of each config
document it serves, under a random name of the process (not its pid), so a
test can see every worker of a server switch to a new version.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

from django.http import HttpRequest, JsonResponse

from ..data_plane import follower_status, plane

_names: dict[int, str] = {}


def process_name() -> str:
    """A random name for this process (a forked worker gets its own)."""
    return _names.setdefault(os.getpid(), secrets.token_hex(6))


def report() -> dict[str, Any]:
    status = follower_status()
    return {
        "ok": True,
        "process": process_name(),
        "config": plane().versions,
        "source": None
        if status is None
        else {
            "name": status.source,
            "connected": status.connected,
            "from_local_copy": list(status.from_mirror),
        },
    }


def healthz(request: HttpRequest) -> JsonResponse:
    response = JsonResponse(report())
    response["Cache-Control"] = "no-store"
    return response
