"""The console's *Restore a shard to a time* action (``shardstore restore-shard SHARD --to
TIME --into HOST [--copy-back]``), registered beside ``console_actions``' own when the ops
app is ready (``apps.py``): the destructive role (``--copy-back`` writes into a live
shard), the password asked again. It runs where the console's tasks run, which start the
scratch server there (``shardstore/backups/scratch.py``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from shardstore.backups.store import open_store
from shardstore.control.context import Control
from shardstore.control.plans import Plan
from shardstore.control.restore_shard import plan_restore_shard
from shardstore.exceptions import InvalidTopology

from ..catalog import CATALOG
from .console_actions import Action, register
from .forms import RestoreShardForm


def plan(made: Control, data: dict[str, Any]) -> Plan:
    url = settings.SHARDSTORE.get("BACKUP_STORE")
    if not url:
        raise InvalidTopology("no backup store is set (PINBOARD_BACKUP_STORE)")
    return plan_restore_shard(
        made.source, open_store(url), shard=data["shard"], to_time=data["to"], into=data["into"],
        author=made.operator, copy_rows_back=data["copy_back"], connect=made.mysql,
        types={t.table: t.type_id for t in CATALOG.types.values()},
    )  # fmt: skip


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
