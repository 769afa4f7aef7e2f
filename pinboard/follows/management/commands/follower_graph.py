"""``python manage.py follower_graph rebuild|repair|check``: the Redis graph and home feeds
from MySQL.

``rebuild`` wipes the graph and writes it again, then writes the home feed of every
pinner who follows anyone or owns a board (each counted active: a Redis that lost its
data lost who was); ``repair`` rewrites only the graph keys that differ from MySQL,
deletes keys MySQL does not explain, and rewrites the feeds of active pinners that
differ; ``check`` reports the drift, changes nothing, and exits with status 1 if
there is any (so a drill can assert that Redis is exactly what MySQL implies).
``--queue`` runs the job on a Celery worker instead of here.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from pinboard.follows.actions import sync_redis
from pinboard.follows.tasks import sync_follower_graph
from shardstore.cli import ProgressLine


class Command(BaseCommand):
    help = (
        "Rebuild, repair or check the Redis follower graph and home feeds against the MySQL"
        " mapping tables."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("action", choices=["rebuild", "repair", "check"])
        parser.add_argument("--queue", action="store_true", help="run as a Celery job")

    def handle(self, *args: Any, action: str, queue: bool, **options: Any) -> None:
        repair, wipe = action != "check", action == "rebuild"
        if queue:
            result = sync_follower_graph.delay(repair=repair, wipe=wipe)
            self.stdout.write(f"queued as task {result.id}")
            return
        graph, feeds = sync_redis(
            repair=repair,
            wipe=wipe,
            graph_progress=ProgressLine(f"follower graph {action}", sys.stderr),
            feeds_progress=ProgressLine(f"home feeds {action}", sys.stderr),
        )
        checking = action == "check"
        verb = "would repair" if checking else "repaired"
        self.stdout.write(
            f"follower graph: {graph.keys_checked} keys checked, {verb} {graph.keys_repaired},"
            f" {'found' if checking else 'removed'} {graph.keys_removed} stray"
        )
        self.stdout.write(
            f"home feeds: {feeds.feeds_checked} {'feeds' if wipe else 'active feeds'} checked,"
            f" {verb} {feeds.feeds_repaired}"
            + (f", {feeds.feeds_missed} kept changing: run again" if feeds.feeds_missed else "")
        )
        for key in graph.drift + feeds.drift:
            self.stdout.write(f"  drift: {key}")
        if checking and (graph.keys_repaired or graph.keys_removed or feeds.feeds_repaired):
            raise CommandError("Redis differs from what MySQL implies: run repair (or rebuild)")
