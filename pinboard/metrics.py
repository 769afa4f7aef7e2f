"""What the site counts, for Prometheus: requests by route and status, Celery tasks, the
fan-out's lag; and how a process group serves them all (the data plane's own families
are in ``shardstore.metrics``).

Metrics are served on a port of their own (``PINBOARD_METRICS_BIND``), never on the
site's: behind nginx every request comes from loopback, so no address check in a view
could keep the internet out. gunicorn's master serves its workers' metrics
(gunicorn.conf.py), a Celery worker's main process its pool's (``pinboard.celery``),
each group summing its processes' files in ``PROMETHEUS_MULTIPROC_DIR``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client import multiprocess as multiprocess_files
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

REQUESTS = Counter(
    "pinboard_http_requests", "Requests served, by route name, method and status.",
    ["route", "method", "status"],
)  # fmt: skip
REQUEST_SECONDS = Histogram(
    "pinboard_http_request_duration_seconds", "Time to serve a request, by route name.",
    ["route"], buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)  # fmt: skip
TASK_SECONDS = Histogram(
    "pinboard_task_duration_seconds", "Time a Celery task ran, by task and outcome.",
    ["task", "state"], buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)  # fmt: skip
TASK_RETRIES = Counter("pinboard_task_retries", "Celery tasks put back to run again.", ["task"])
LEDGER_RESENDS = Counter(
    "pinboard_ledger_resends", "Tasks the ledger sent again, their first message lost."
)
FANOUT_LAG = Histogram(
    "pinboard_fanout_lag_seconds",
    "From a pin's creation to a batch of its followers' feeds written.",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900),
)

#: Requests with no route (a 404 before any view) share one label.
UNMATCHED = "unmatched"
#: The methods counted by name; any other a client makes up counts as ``OTHER`` (each label
#: value is a series Prometheus keeps: a client must not be able to add them at will).
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
OTHER = "other"


class MetricsMiddleware:
    """Counts and times every request by its route's name (outermost but for the request
    ID, so a response any other middleware makes is counted too)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = request.resolver_match
        route = match.view_name if match is not None else UNMATCHED
        REQUEST_SECONDS.labels(route).observe(time.perf_counter() - started)
        method = request.method if request.method in METHODS else OTHER
        REQUESTS.labels(route, method, str(response.status_code)).inc()
        return response


def fanout_written(sequence: int) -> None:
    """A batch of a pin's fan-out is written; ``sequence`` is the pin's (microseconds since
    the epoch at its creation)."""
    FANOUT_LAG.observe(max(0.0, time.time() - sequence / 1_000_000))


def serve_group(bind: str, *extra: Collector) -> tuple[Any, Any]:
    """Serve a process group's ``/metrics`` on ``bind`` (``host:port``) from a thread of
    its main process, the group's directory emptied first; returns the server and its
    thread. Refused without a multiprocess directory: the group's processes would each
    count alone, and the page would show only this one's."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not directory:
        raise RuntimeError("PINBOARD_METRICS_BIND needs PROMETHEUS_MULTIPROC_DIR (a directory)")
    clear_files(directory)
    shown = CollectorRegistry()
    multiprocess_files.MultiProcessCollector(shown)  # type: ignore[no-untyped-call]
    for collector in extra:
        shown.register(collector)
    host, _, port = bind.rpartition(":")
    return start_http_server(int(port), host or "127.0.0.1", registry=shown)


def clear_files(directory: str) -> None:
    """Empty a multiprocess directory as a process group starts: the files of processes
    of an earlier run would otherwise be summed with ours. This process's own are kept
    (made as its metrics were defined, and open)."""
    ours = f"_{os.getpid()}.db"
    for name in os.listdir(directory):
        if name.endswith(".db") and not name.endswith(ours):
            os.unlink(os.path.join(directory, name))


def process_gone(pid: int) -> None:
    """Drop a process's live gauges (the config version it served) when it exits."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess_files.mark_process_dead(pid)  # type: ignore[no-untyped-call]
