"""Each request's ID, and its one line in the access log.

``RequestLogMiddleware`` comes first in ``MIDDLEWARE``: it binds the request's ID
(``request_id.from_client``: the client's ``X-Request-ID`` if well formed, else a new one)
for everything the request does, the Celery tasks it queues included, sends it back in the
response's ``X-Request-ID``, and logs the request at INFO on ``pinboard.request`` once the
response is made: method, route (the URL pattern's name), path (without its query string,
which may carry what a pinner typed), status and ``duration_ms``, as ``extra=`` fields that
a JSON line holds under those names. That line stands in for gunicorn's access log where
the logs are JSON (``PINBOARD_GUNICORN_ACCESS_LOG=`` turns gunicorn's off: see the README).
A streamed response is timed to its first byte, not its last.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from . import request_id

log = logging.getLogger("pinboard.request")


class RequestLogMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        rid = request_id.from_client(request.headers.get(request_id.HEADER))
        started = time.perf_counter()
        with request_id.bound(rid):
            response = self.get_response(request)
            response[request_id.HEADER] = rid
            _log_request(request, response, (time.perf_counter() - started) * 1000)
        return response


def _log_request(request: HttpRequest, response: HttpResponse, duration_ms: float) -> None:
    match = request.resolver_match
    route = match.view_name if match is not None else None
    duration_ms = round(duration_ms, 1)
    log.info(
        "%s %s %s %.1f ms",
        request.method,
        request.path,
        response.status_code,
        duration_ms,
        extra={
            "method": request.method,
            "route": route,
            "path": request.path,
            "status": response.status_code,
            "duration_ms": duration_ms,
        },
    )
