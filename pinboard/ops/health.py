"""``/healthz`` and ``/readyz``: is the process up, and may it take requests.

``/healthz`` (liveness) answers anyone, and says only that the process is up: nothing
about where its config comes from or what it serves. ``/readyz`` (readiness) is the load
balancer's health check: 200 when the process serves a valid shard map and reaches its
MySQL hosts, else 503 with a short ``reason`` (``readiness.py``). It also says, for the
tests of config propagation, which version of each config document the process serves
and whether it follows its config source, under a random name of the process (not its
pid), so a test can see every worker of a server switch to a new version. It never
names the source itself (``zk://hosts/root`` would map the cluster) nor a host's
address, and in production the load balancer answers ``/readyz`` from the internet with
a 404 of its own (infra/terraform/modules/web), and any other spelling of it that a
client's request carries through is a 404 here; the console shows the rest to staff.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

from django.http import Http404, HttpRequest, JsonResponse

from ..data_plane import follower_status, plane
from .readiness import NO_MAP, not_ready

_names: dict[int, str] = {}


def process_name() -> str:
    """A random name for this process (a forked worker gets its own)."""
    return _names.setdefault(os.getpid(), secrets.token_hex(6))


def report() -> dict[str, Any]:
    """What ``/readyz`` says (and a worker's ``config_report`` task)."""
    status = follower_status()
    return {
        "ok": True,
        "process": process_name(),
        "config": plane().versions,
        "source": None
        if status is None
        else {
            "connected": status.connected,
            "from_local_copy": list(status.from_mirror),
            # Past its lease: MySQL on by its last map, Redis writes refused.
            "cut_off": status.cut_off,
        },
    }


def healthz(request: HttpRequest) -> JsonResponse:
    return _uncached(JsonResponse({"ok": True}))


def readyz(request: HttpRequest) -> JsonResponse:
    # The load balancer's own check carries no X-Forwarded-For; a client's request it
    # forwards always does. Its rule refuses the literal path only, and the path that
    # reaches here is decoded (``/read%79z``): so a forwarded request is refused here too.
    if "HTTP_X_FORWARDED_FOR" in request.META:
        raise Http404("no such page")
    reason = not_ready()
    if reason == NO_MAP:  # nothing to report but that
        body: dict[str, Any] = {"ok": False, "process": process_name(), "config": {}}
        body["source"] = None
    else:
        body = report()
    body["ok"], body["reason"] = reason is None, reason
    return _uncached(JsonResponse(body, status=200 if reason is None else 503))


def _uncached(response: JsonResponse) -> JsonResponse:
    response["Cache-Control"] = "no-store"
    return response
