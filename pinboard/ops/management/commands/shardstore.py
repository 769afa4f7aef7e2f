"""``python manage.py shardstore ...``: the shardstore CLI on the site's store, config source
and journal (see ``python manage.py shardstore --help``), and long jobs
(``shardstore job ...``: pinboard/ops/job_cli.py)."""

import argparse
import getpass
import sys
from typing import TextIO, cast

from django.core.management.base import BaseCommand, CommandError

from pinboard.catalog import CATALOG
from pinboard.data_plane import cached_store
from pinboard.ops import job_cli
from pinboard.ops.control import control
from shardstore import cli


class Command(BaseCommand):
    help = (
        "Shard-store operations: init, reconcile, decode, bucket; topology show|history|diff|"
        "publish|rollback; open-range, close-range, host-service, cache-server, redis-move;"
        " job kinds|start|status|list|resume."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("args", nargs=argparse.REMAINDER)

    def handle(self, *args: str, **options: object) -> None:
        if args[:1] == ("job",):  # jobs live in the control database: manage.py's only
            operator = f"{getpass.getuser()} (shell)"
            self.stdout.ending = ""  # a progress bar rewrites its line: no newline added
            out = cast(TextIO, self.stdout)  # Django's OutputWrapper writes like a TextIO
            status = job_cli.main(list(args[1:]), out=out, operator=operator)
            if status:
                raise CommandError(f"shardstore job exited with status {status}")
            return
        opened = []

        def control_factory():  # type: ignore[no-untyped-def]
            opened.append(control())
            return opened[-1]

        try:
            # Progress lines rewrite themselves with "\r": write them to the raw stream.
            status = cli.main(
                list(args),
                catalog=CATALOG,
                store_factory=cached_store,
                control_factory=control_factory,
                out=cast(TextIO, self.stdout),
                err=sys.stderr,
            )
        finally:
            for made in opened:
                made.source.close()
        if status:
            raise CommandError(f"shardstore exited with status {status}")
