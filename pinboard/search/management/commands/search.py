"""``python manage.py search rebuild|check|counts|optimize``: the search index against the
shards.

``rebuild`` makes the index agree with the shards, shard by shard, with a progress
line; cut short, it resumes at the shard it got to when run again (``--restart``
starts over). ``check`` compares without writing and exits with status 1 if the index
differs from the shards. ``counts`` prints how many documents of each kind it holds.
``optimize`` merges the index's pieces that many writes left (a rebuild that wrote does
it at its end; on MySQL it holds the index's writes, not its reads, while it runs).
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from pinboard.data_plane import cached_store
from pinboard.search.index import TABLES
from pinboard.search.plane import search_index
from pinboard.search.rebuild import rebuild
from shardstore.cli import ProgressLine


class Command(BaseCommand):
    help = (
        "Rebuild or check the search index against the shards, count its documents, or optimize it."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("action", choices=["rebuild", "check", "counts", "optimize"])
        parser.add_argument(
            "--restart", action="store_true", help="rebuild from the first shard, not where a"
            " rebuild cut short got to"
        )  # fmt: skip

    def handle(self, *args: Any, action: str, restart: bool, **options: Any) -> None:
        index = search_index()
        if action == "counts":
            for kind in TABLES:
                self.stdout.write(f"{kind}: {index.count(kind)}")
            return
        if action == "optimize":
            index.optimize()
            self.stdout.write("search index optimized")
            return
        repair = action == "rebuild"
        store = cached_store().store  # the shards themselves: a walk of them skips the caches
        report = rebuild(
            store,
            index,
            repair=repair,
            restart=restart,
            progress=ProgressLine(f"search {action}", sys.stderr),
        )
        if report.first_shard:
            self.stdout.write(f"resumed at shard {report.first_shard}")
        verb = "wrote" if repair else "would write"
        self.stdout.write(
            f"search {action}: {report.shards} shards, {report.checked} documents checked,"
            f" {verb} {report.written}, {'removed' if repair else 'would remove'} {report.removed}"
        )
        for what in report.drift:
            self.stdout.write(f"  drift: {what}")
        if not repair and report.differs:
            raise CommandError("the search index differs from the shards: run search rebuild")
