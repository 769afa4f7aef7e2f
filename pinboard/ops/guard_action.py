"""The console's *Pause the guard* action (``shardstore guard pause|unpause``), registered
beside ``console_actions``' own when the ops app is ready (``apps.py``): the operator's
role, the password asked again, journaled as every change."""

from __future__ import annotations

from shardstore.control.guard import Guard, plan_pause

from .console_actions import Action, register
from .forms import GuardPauseForm

GUARD_PAUSE = register(
    Action(
        "guard-pause",
        "Pause the guard, or let it act again",
        "The guard (shardstore guard run) fails a master that died over with no person: the "
        "emergency failover's checks and fence first, never when a replica still sees the "
        "master, never twice for a range within its cool-down. Paused, it goes on watching "
        "and says what it would do, but fails nothing over: dead masters wait for a person.",
        GuardPauseForm,
        lambda made, data: plan_pause(
            Guard(made),
            paused=data["state"] == "pause",
            reason=data["reason"],
            author=made.operator,
        ),
    )
)
