"""Long jobs of the follower graph, run as Celery tasks with progress."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from celery import shared_task

from shardstore.graph_sync import sync_graph

from ..store import get_graph, get_store


@shared_task(bind=True, acks_late=True)
def sync_follower_graph(self: Any, *, repair: bool = True, wipe: bool = False) -> dict[str, Any]:
    """Rebuild (``wipe=True``) or check and repair the Redis graph from MySQL.

    Progress (shards done of total) is reported as the task's PROGRESS state
    where a result backend is configured.
    """

    def progress(done: int, total: int) -> None:
        if (
            self.request.id
            and not self.request.is_eager
            and self.backend.__class__.__name__ != "DisabledBackend"
        ):
            self.update_state(state="PROGRESS", meta={"done": done, "total": total})

    report = sync_graph(get_store().store, get_graph(), repair=repair, wipe=wipe, progress=progress)
    return asdict(report)
