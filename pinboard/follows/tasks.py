"""Long jobs of the follower graph and home feeds, run as Celery tasks with progress."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from celery import shared_task

from ..data_plane import cached_store
from .actions import sync_redis


@shared_task(bind=True, acks_late=True)
def sync_follower_graph(self: Any, *, repair: bool = True, wipe: bool = False) -> dict[str, Any]:
    """Rebuild (``wipe=True``) or check and repair the Redis graph and home feeds from MySQL
    (a rebuild writes every pinner's feed; a repair, active pinners' feeds that differ).

    Progress (shards done of total: the graph's pass, then the feeds') is reported as the
    task's PROGRESS state where a result backend is configured.
    """
    shards = cached_store().topology.shard_count

    def progress(done: int, total: int) -> None:
        if (
            self.request.id
            and not self.request.is_eager
            and self.backend.__class__.__name__ != "DisabledBackend"
        ):
            self.update_state(state="PROGRESS", meta={"done": done, "total": total})

    graph, feeds = sync_redis(
        repair=repair,
        wipe=wipe,
        graph_progress=lambda done, total: progress(done, 2 * total),
        feeds_progress=lambda done, total: progress(shards + done, 2 * total),
    )
    return {**asdict(graph), "feeds": asdict(feeds)}
