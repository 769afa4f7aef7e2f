"""The site's control plane: its config source, host locks and journal, for the console and
the ``manage.py shardstore`` commands alike."""

from __future__ import annotations

import getpass

from django.conf import settings

from shardstore import Store, Topology
from shardstore.backups.store import backup_store
from shardstore.control.context import Control
from shardstore.control.documents import masked
from shardstore.control.fencing import command_fence
from shardstore.control.locks import locks_for
from shardstore.control.mysql_hosts import admin
from shardstore.control.plans import OpenOperation, Plan
from shardstore.control.replacement import command_provision
from social.redis_keys import REDIS_KEYS

from ..catalog import CATALOG
from ..data_plane import cached_store, open_config
from .models import JournalEntry


def progress_note(operation: str, host: str, line: str) -> None:
    """A long step's progress (a rebuild's ``shards 512/2048``) as the result of the running
    entry of ``operation`` on ``host``, until its end replaces it: the console shows it."""
    JournalEntry.objects.filter(
        operation=operation, ok=None, dry_run=False, params__host=host
    ).update(result=masked(line))


class DatabaseJournal:
    """``shardstore.control.plans.Journal`` on the control database. What it writes is
    masked (``documents.masked``): an address given to an operation, or named in an error,
    keeps no password in the journal."""

    name = "the site's journal (its control database)"

    def begin(self, plan: Plan, *, operator: str, dry_run: bool) -> JournalEntry:
        return JournalEntry.objects.create(
            operation=plan.operation,
            summary=masked(plan.summary),
            plan=masked(plan.lines()),
            params=masked(plan.params),
            locks=list(plan.locks),
            operator=operator,
            dry_run=dry_run,
        )

    def step(self, entry: JournalEntry, index: int, name: str, note: str) -> None:
        entry.steps = [*entry.steps, [index, masked(name), masked(note)]]
        entry.save(update_fields=["steps"])

    def finish(self, entry: JournalEntry, *, ok: bool, result: str, seconds: float) -> None:
        entry.ok, entry.result, entry.seconds = ok, masked(result), seconds
        entry.save(update_fields=["ok", "result", "seconds"])

    def open_operations(self) -> list[OpenOperation]:
        return [
            OpenOperation(
                e.pk,
                e,
                e.operation,
                e.summary,
                e.operator,
                tuple(e.locks),
                dict(e.params),
                [(int(i), str(n), str(note)) for i, n, note in e.steps],
            )
            for e in JournalEntry.objects.filter(ok__isnull=True, dry_run=False).order_by("id")
        ]


def journal_not_run(operation: str, summary: str, operator: str, why: str) -> int:
    """A run refused before its first step, journaled as a failure that changed nothing;
    the entry's id."""
    journal = DatabaseJournal()
    nothing = Plan(operation, f"{summary}: not run", [])
    entry = journal.begin(nothing, operator=operator, dry_run=False)
    journal.finish(entry, ok=False, result=why, seconds=0.0)
    return int(entry.pk)


def connect(topology: Topology) -> Store:
    """A store on another shard map (to create the shards of a new range)."""
    return Store(topology, catalog=CATALOG, backend_options=settings.SHARDSTORE["BACKEND_OPTIONS"])


def control(operator: str | None = None) -> Control:
    """The control plane, acting for ``operator`` (default: the shell's user)."""
    source = open_config()
    who = operator or f"{getpass.getuser()} (shell)"
    return Control(
        source,
        cached_store,
        connect,
        DatabaseJournal(),
        locks_for(source),
        who,
        admin(settings.SHARDSTORE.get("MYSQL_ADMIN"), settings.SHARDSTORE.get("MYSQL_REPLICATION")),
        command_fence(settings.SHARDSTORE.get("FENCE_COMMAND")),
        REDIS_KEYS,
        command_provision(settings.SHARDSTORE.get("PROVISION_COMMAND")),
        backup_store(
            settings.SHARDSTORE.get("BACKUP_STORE"), settings.SHARDSTORE.get("BACKUP_KMS_KEY")
        ),
    )
