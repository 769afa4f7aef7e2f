"""The Celery app: fan-out of new pins to home feeds, graph rebuild and repair jobs."""

import os
import time
from collections.abc import Callable
from typing import Any

from celery import Celery
from celery.signals import (
    task_postrun,
    task_prerun,
    task_retry,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
)

from .ledger import Sweep
from .metrics import TASK_RETRIES, TASK_SECONDS, clear_files, process_gone, serve

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pinboard.settings.dev")

app = Celery("pinboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.steps["worker"].add(Sweep)  # sends again what a lost message left undone


@task_prerun.connect
def _pin_plane(task_id: str | None = None, **_: object) -> None:
    """A task runs on one version of the config, like a request (pinboard/data_plane.py)."""
    from .data_plane import pin

    _unpins[task_id] = pin()
    _started[task_id] = time.perf_counter()


@task_postrun.connect
def _unpin_plane(
    task_id: str | None = None, task: Any = None, state: str | None = None, **_: object
) -> None:
    unpin = _unpins.pop(task_id, None)
    if unpin is not None:
        unpin()
    started = _started.pop(task_id, None)
    if started is not None:
        TASK_SECONDS.labels(task.name, state or "UNKNOWN").observe(time.perf_counter() - started)


@task_retry.connect
def _count_retry(sender: Any = None, **_: object) -> None:
    TASK_RETRIES.labels(sender.name).inc()


_unpins: dict[str | None, Callable[[], None]] = {}
_started: dict[str | None, float] = {}


@worker_init.connect
def _serve_metrics(**_: object) -> None:
    """The worker's main process serves its pool's metrics, and the fleet's that are read
    at each scrape (queues, replication, open operations: pinboard/ops/fleet_metrics.py)."""
    from django.conf import settings

    if settings.METRICS_BIND:
        from .ops.fleet_metrics import FleetCollector

        directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
        if not directory:
            raise RuntimeError("PINBOARD_METRICS_BIND needs PROMETHEUS_MULTIPROC_DIR (a directory)")
        clear_files(directory)
        serve(settings.METRICS_BIND, FleetCollector(app))


@worker_process_init.connect
def _plane_in_child(**_: object) -> None:
    """A pool's child process follows the config from its start (built after the fork)."""
    from .data_plane import plane

    plane()


@worker_ready.connect
def _plane_in_solo_worker(sender: Any = None, **_: object) -> None:
    """A worker that runs tasks in its own process (``--pool=solo`` or threads) likewise."""
    if "prefork" not in type(getattr(sender, "pool", None)).__module__:
        from .data_plane import plane

        plane()


@worker_process_shutdown.connect
def _withdraw_child(**_: object) -> None:
    """A pool's child leaves without running ``atexit``: it withdraws from the followers here
    (``data_plane.stop_following``; a solo worker's exit does it by itself)."""
    from .data_plane import stop_following

    stop_following()
    process_gone(os.getpid())
