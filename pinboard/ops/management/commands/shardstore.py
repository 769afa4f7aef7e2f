"""``python manage.py shardstore ...``: the shardstore CLI on the site's store, config source
and journal (see ``python manage.py shardstore --help``)."""

import argparse
import sys

from django.core.management.base import BaseCommand, CommandError

from pinboard.ops.control import control
from pinboard.store import get_store
from shardstore import cli


class Command(BaseCommand):
    help = (
        "Shard-store operations: init, reconcile, decode, bucket; topology show|history|diff|"
        "publish|rollback; open-range, close-range, host-service, cache-server, redis-move."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("args", nargs=argparse.REMAINDER)

    def handle(self, *args: str, **options: object) -> None:
        opened = []

        def control_factory():  # type: ignore[no-untyped-def]
            opened.append(control())
            return opened[-1]

        try:
            # Progress lines rewrite themselves with "\r": write them to the raw stream.
            status = cli.main(
                list(args),
                store_factory=get_store,
                control_factory=control_factory,
                out=self.stdout,
                err=sys.stderr,
            )
        finally:
            for made in opened:
                made.source.close()
        if status:
            raise CommandError(f"shardstore exited with status {status}")
