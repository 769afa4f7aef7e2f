"""The Celery app: fan-out of new pins to home feeds, graph rebuild and repair jobs.

A task queued while a request (or another task) is served carries that request's ID in a
header of its message and binds it while it runs (``pinboard/request_id.py``), so its log
lines carry it; a worker logs as the site does (Django's ``LOGGING``), not as Celery would.
"""

import logging
import logging.config
import os
import time
from collections.abc import Callable
from contextvars import Token
from typing import Any

from celery import Celery
from celery.signals import (
    before_task_publish,
    setup_logging,
    task_postrun,
    task_prerun,
    task_retry,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
)

from . import request_id
from .ledger import Sweep
from .metrics import TASK_RETRIES, TASK_SECONDS, process_gone, serve_group

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pinboard.settings.dev")

app = Celery("pinboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.steps["worker"].add(Sweep)  # sends again what a lost message left undone


@task_prerun.connect
def _bind_plane(task_id: str | None = None, **_: object) -> None:
    """A task runs on one version of the config, like a request (pinboard/data_plane.py)."""
    from .data_plane import bind

    _unbinds[task_id] = bind()
    _started[task_id] = time.perf_counter()


@task_postrun.connect
def _unbind_plane(
    task_id: str | None = None, task: Any = None, state: str | None = None, **_: object
) -> None:
    unbind = _unbinds.pop(task_id, None)
    if unbind is not None:
        unbind()
    started = _started.pop(task_id, None)
    if started is not None:
        TASK_SECONDS.labels(task.name, state or "UNKNOWN").observe(time.perf_counter() - started)


@task_retry.connect
def _count_retry(sender: Any = None, **_: object) -> None:
    TASK_RETRIES.labels(sender.name).inc()


_unbinds: dict[str | None, Callable[[], None]] = {}
_started: dict[str | None, float] = {}


@worker_init.connect
def _serve_metrics(**_: object) -> None:
    """The worker's main process serves its pool's metrics, and the fleet's that are read
    at each scrape (queues, replication, open operations: pinboard/ops/fleet_metrics.py)."""
    from django.conf import settings

    if settings.METRICS_BIND:
        from .ops.fleet_metrics import FleetCollector

        serve_group(settings.METRICS_BIND, FleetCollector(app))


@before_task_publish.connect
def _send_request_id(headers: dict[str, Any] | None = None, **_: object) -> None:
    """A task queued while a request or task is served carries its ID (one it was given
    already, as by the ledger's sweep, stays)."""
    current = request_id.current()
    if headers is not None and current is not None:
        headers.setdefault(request_id.TASK_HEADER, current)


@task_prerun.connect
def _bind_request_id(task_id: str | None = None, task: Any = None, **_: object) -> None:
    """The task's lines carry the ID its message brought; a task run eagerly, in the
    request that queued it, keeps the request's."""
    sent = getattr(getattr(task, "request", None), request_id.TASK_HEADER, None)
    if not request_id.well_formed(sent):
        sent = request_id.current()
    _request_ids[task_id] = request_id.bind(sent)


@task_postrun.connect
def _unbind_request_id(task_id: str | None = None, **_: object) -> None:
    token = _request_ids.pop(task_id, None)
    if token is not None:
        request_id.unbind(token)


_request_ids: dict[str | None, Token[str | None]] = {}


@setup_logging.connect
def _log_as_the_site(loglevel: int | str | None = None, **_: object) -> None:
    """A worker logs through the site's ``LOGGING`` (JSON lines with the request ID, or plain
    text) at the level of its ``--loglevel``, instead of Celery's own handlers."""
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)
    if loglevel:
        logging.getLogger().setLevel(loglevel)


@worker_process_init.connect
def _plane_in_child(**_: object) -> None:
    """A pool's child process follows the config from its start (built after the fork)."""
    from .data_plane import start

    start()


@worker_ready.connect
def _plane_in_solo_worker(sender: Any = None, **_: object) -> None:
    """A worker that runs tasks in its own process (``--pool=solo`` or threads) likewise."""
    if "prefork" not in type(getattr(sender, "pool", None)).__module__:
        from .data_plane import start

        start()


@worker_process_shutdown.connect
def _withdraw_child(**_: object) -> None:
    """A pool's child leaves without running ``atexit``: it withdraws from the followers here
    (``data_plane.stop_following``; a solo worker's exit does it by itself)."""
    from .data_plane import stop_following

    stop_following()
    process_gone(os.getpid())
