"""The console's *Durability of a range* action (``shardstore durability FIRST-LAST
POLICY``), registered beside ``console_actions``' own when the ops app is ready
(``apps.py``): the operator's role, the password asked again, as every change."""

from __future__ import annotations

from typing import Any

from shardstore.control.durability_change import plan_durability

from .console_actions import Action, register
from .forms import DurabilityForm


def policy(data: dict[str, Any]) -> str:
    return "strict" if data["policy"] == "strict" else f"degrade-after {data['seconds']}"


DURABILITY = register(
    Action(
        "durability",
        "Durability of a range",
        "What a range's commits wait for when no replica acknowledges them. Strict (the "
        "default): a commit waits for a replica's acknowledgement with no end, so a range "
        "whose replica is gone takes no write, and a failover loses no acknowledged write. "
        "Degrade-after N s: a commit waits N seconds, then the master commits asynchronously "
        "until a replica has caught up; the range keeps taking writes, and those acknowledged "
        "meanwhile are on the master alone. Set on the range's master, then recorded in the "
        "shard map; strict is refused for a range with no replica.",
        DurabilityForm,
        lambda made, data: plan_durability(
            made.source,
            shards=(data["first"], data["last"]),
            policy=policy(data),
            author=made.operator,
            connect=made.mysql,
        ),
    )
)
