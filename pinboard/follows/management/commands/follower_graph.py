"""``python manage.py follower_graph rebuild|repair|check``: the Redis graph from MySQL.

``rebuild`` wipes the graph and writes it again; ``repair`` rewrites only the
keys that differ from MySQL and deletes keys MySQL does not explain;
``check`` reports the drift and changes nothing. ``--queue`` runs the job on a
Celery worker instead of here.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand

from pinboard.follows.tasks import sync_follower_graph
from pinboard.store import get_graph, get_store
from shardstore.cli import ProgressLine
from shardstore.graph_sync import sync_graph


class Command(BaseCommand):
    help = "Rebuild, repair or check the Redis follower graph against the MySQL mapping tables."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("action", choices=["rebuild", "repair", "check"])
        parser.add_argument("--queue", action="store_true", help="run as a Celery job")

    def handle(self, *args: Any, action: str, queue: bool, **options: Any) -> None:
        repair, wipe = action != "check", action == "rebuild"
        if queue:
            result = sync_follower_graph.delay(repair=repair, wipe=wipe)
            self.stdout.write(f"queued as task {result.id}")
            return
        report = sync_graph(
            get_store().store,
            get_graph(),
            repair=repair,
            wipe=wipe,
            progress=ProgressLine(f"follower graph {action}", sys.stderr),
        )
        verb = "would repair" if action == "check" else "repaired"
        self.stdout.write(
            f"{report.keys_checked} keys checked, {verb} {report.keys_repaired},"
            f" {'found' if action == 'check' else 'removed'} {report.keys_removed} stray"
        )
        for key in report.drift:
            self.stdout.write(f"  drift: {key}")
