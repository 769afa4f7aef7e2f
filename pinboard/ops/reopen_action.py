"""The console's *Reopen a master* action (``shardstore reopen HOST``), registered beside
``console_actions``' own when the ops app is ready (``apps.py``)."""

from __future__ import annotations

from shardstore.control.reopen import plan_reopen

from .console_actions import Action, register
from .forms import ReopenForm

REOPEN = register(
    Action(
        "reopen",
        "Reopen a master that restarted",
        "A shard host starts read-only, a restarted master included, and one with no replica "
        "(either half of a split, a promoted master before its rebuild) has none to fail over "
        "to. Refused unless the map names the host a master, it is read-only and replicates "
        "from no one (a split's reverse stream aside), and no other host takes the site's "
        "writes on its shards. Sets the GTID domain the map records for it (a split's new "
        "master writes in one of its own, which a restart loses), arms its semi-sync, and "
        "clears read_only.",
        ReopenForm,
        lambda made, data: plan_reopen(
            made.source, host=data["host"], author=made.operator, connect=made.mysql
        ),
    )
)
