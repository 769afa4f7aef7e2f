"""The Celery app: fan-out of new pins to home feeds, graph rebuild and repair jobs."""

import os
from collections.abc import Callable
from typing import Any

from celery import Celery
from celery.signals import (
    task_postrun,
    task_prerun,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
)

from .ledger import Sweep

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


@task_postrun.connect
def _unpin_plane(task_id: str | None = None, **_: object) -> None:
    unpin = _unpins.pop(task_id, None)
    if unpin is not None:
        unpin()


_unpins: dict[str | None, Callable[[], None]] = {}


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
