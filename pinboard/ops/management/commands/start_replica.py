"""``python manage.py start_replica HOST``: start a restarted replica's replication, the
relay log it kept applied first (``shardstore/control/relay_log.py``; docs/operations.md,
"A restarted replica"). Replicas start with ``skip_slave_start``, so their threads stay
stopped after a restart: a bare ``START SLAVE`` would delete that relay log.

Refused unless the shard map in force names HOST the replica of a master that answers:
with its master down, a replica is left as it is, for the emergency failover to judge.
Holds the host's lock meanwhile, as an operation would."""

import argparse
import getpass

from django.core.management.base import BaseCommand, CommandError

from pinboard.ops.control import control
from shardstore.control import documents, relay_log
from shardstore.control.context import Control
from shardstore.control.emergency_checks import answers
from shardstore.control.mysql_hosts import HostError
from shardstore.exceptions import ShardStoreError
from shardstore.replicas import replicas_of

#: How long the replica may take to apply its kept relay log.
APPLY_SECONDS = 300.0


class Command(BaseCommand):
    help = "Start a restarted replica's replication, its kept relay log applied first."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("host", help="the replica, as the shard map names it")

    def handle(self, *args: str, **options: object) -> None:
        host = str(options["host"])
        made = control(f"{getpass.getuser()} (shell)")
        try:
            document = made.source.current(documents.SHARDS).document
            masters = {r["master"] for r in document["ranges"] if host in replicas_of(r)}
            if not masters:
                raise CommandError(f"the shard map in force names {host} the replica of nothing")
            addresses = document["hosts"]
            for master in sorted(masters):
                if not _answers(made, master, addresses[master]):
                    raise CommandError(
                        f"{master}, {host}'s master, gives no answer: {host} is left as it is"
                        f" (`shardstore failover {master} --emergency` judges it)"
                    )
            with (
                made.locks.hold([host], owner=made.operator),
                made.mysql(addresses[host]) as replica,
            ):
                kept = relay_log.start(replica, APPLY_SECONDS)
        except ShardStoreError as exc:  # a MySQL error, the host's lock held by a run
            raise CommandError(str(exc)) from None
        finally:
            made.source.close()
        if kept is None:
            self.stdout.write(f"{host}: a replication thread ran, its relay log not at risk")
        else:
            self.stdout.write(f"{kept.note(host)}; replication started")


def _answers(made: Control, master: str, address: str) -> bool:
    try:
        return answers(made.mysql, master, address)
    except HostError:
        return True  # it answers with a refusal (too many connections): it is alive
