"""The console's backup actions, registered beside ``console_actions``' own when the ops
app is ready (``apps.py``), each with the destructive role and the password asked again:

* *Back up now* (``shardstore backup request FIRST-LAST``): a backup of a range asked for,
  taken by its replica at its timer's next run (``shardstore/control/backup_request.py``);
* *Restore a shard to a time* (``shardstore restore-shard SHARD --to TIME --into HOST
  [--copy-back]``: ``--copy-back`` writes into a live shard). It runs where the console's
  tasks run, which start the scratch server there (``shardstore/backups/scratch.py``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from shardstore.backups.store import BackupStore, backup_store
from shardstore.control.backup_request import plan_backup_request
from shardstore.control.context import Control
from shardstore.control.plans import Plan
from shardstore.control.restore_shard import plan_restore_shard
from shardstore.exceptions import InvalidTopology

from ..catalog import CATALOG
from .console_actions import Action, register
from .forms import BackupNowForm, RestoreShardForm


def plan(made: Control, data: dict[str, Any]) -> Plan:
    # The store is opened as the plan runs, on a worker: the web hosts that plan it may not
    # read the backups (and the plan they show is then the one the worker runs).
    return plan_restore_shard(
        made.source, store_here, shard=data["shard"], to_time=data["to"], into=data["into"],
        author=made.operator, copy_rows_back=data["copy_back"], connect=made.mysql,
        types={t.table: t.type_id for t in CATALOG.types.values()},
    )  # fmt: skip


def store_here() -> BackupStore:
    """The backup store this host is told of; InvalidTopology if none."""
    store = backup_store(settings.SHARDSTORE.get("BACKUP_STORE"), settings.SHARDSTORE.get("BACKUP_KMS_KEY"))  # fmt: skip
    if store is None:
        raise InvalidTopology("no backup store is set on this host (PINBOARD_BACKUP_STORE): a worker host runs the restore")  # fmt: skip
    return store


RESTORE_SHARD = register(
    Action(
        "restore-shard",
        "Restore a shard to a time",
        "One shard as it was at a second, from its range's newest backup before it and its "
        "master's archived binary logs, copied onto a spare beside the live one and compared "
        "with it: rows missing (deleted since), added and changed, each object by its ID. "
        "With 'copy back', the rows deleted since are written back into the live shard on "
        "its master; added and changed rows are only listed.",
        RestoreShardForm,
        plan,
    )
)


BACKUP_NOW = register(
    Action(
        "backup-now",
        "Back up a range now",
        "Ask for a backup of a range: the replica its backups are taken from takes one at its "
        "timer's next run (within minutes), streamed into the backup store as the daily one "
        "is. The backups page shows it once it is taken.",
        BackupNowForm,
        lambda made, data: plan_backup_request(
            made.source, span=[data["first"], data["last"]], author=made.operator
        ),
    )
)
