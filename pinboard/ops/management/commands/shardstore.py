"""``python manage.py shardstore ...``: the shardstore CLI on the site's store."""

import argparse
import sys

from django.core.management.base import BaseCommand, CommandError

from pinboard.store import get_store
from shardstore import cli


class Command(BaseCommand):
    help = "Shard-store operations: init, reconcile, decode, bucket, topology (see --help of each)."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("args", nargs=argparse.REMAINDER)

    def handle(self, *args: str, **options: object) -> None:
        # Progress lines rewrite themselves with "\r": write them to the raw stream.
        status = cli.main(list(args), store_factory=get_store, out=self.stdout, err=sys.stderr)
        if status:
            raise CommandError(f"shardstore exited with status {status}")
