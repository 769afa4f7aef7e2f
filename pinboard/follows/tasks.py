"""Long jobs of the follower graph and home feeds, run as Celery tasks with progress."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from celery import shared_task

from shardstore.feed_sync import sync_feeds
from shardstore.graph_sync import sync_graph

from ..store import get_feeds, get_graph, get_store


@shared_task(bind=True, acks_late=True)
def sync_follower_graph(self: Any, *, repair: bool = True, wipe: bool = False) -> dict[str, Any]:
    """Rebuild (``wipe=True``) or check and repair the Redis graph and home feeds from MySQL
    (a rebuild writes every pinner's feed; a repair, active pinners' feeds that differ).

    Progress (shards done of total: the graph's pass, then the feeds') is reported as the
    task's PROGRESS state where a result backend is configured.
    """
    shards = get_store().topology.shard_count

    def progress(done: int, total: int) -> None:
        if (
            self.request.id
            and not self.request.is_eager
            and self.backend.__class__.__name__ != "DisabledBackend"
        ):
            self.update_state(state="PROGRESS", meta={"done": done, "total": total})

    store = get_store().store
    graph = sync_graph(
        store,
        get_graph(),
        repair=repair,
        wipe=wipe,
        progress=lambda done, total: progress(done, 2 * total),
    )
    feeds = sync_feeds(
        store,
        get_feeds(),
        repair=repair,
        everyone=wipe,
        progress=lambda done, total: progress(shards + done, 2 * total),
    )
    return {**asdict(graph), "feeds": asdict(feeds)}
