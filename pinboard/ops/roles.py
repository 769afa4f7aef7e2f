"""The console's roles: Django groups holding the journal's permissions (``models.py``).

* no role: a staff account reads every page of the console, and runs nothing (every
  action's POST, a job's start or resume, answers 403);
* ``viewer``: the same, and the journal in the admin;
* ``operator``: runs the actions that are not destructive (open a range, host service,
  cache servers, Redis moves, publish, roll back, diff) and long jobs;
* ``destructive``: runs what cannot simply be undone: failover, split, split revert,
  cleanup, close-range, rebuild (it wipes a host), reopen (a master made writable),
  ending an operation left open, and the long jobs that drop data (the cleanup job),
  started or resumed. A role of its own: an operator does not hold it unless given it.

A superuser holds every permission. Running any action that changes the topology also
asks for the operator's password again within the last few minutes (``reauth.py``).
"""

from __future__ import annotations

from typing import Any

from . import job_kinds

RUN = "ops.run_actions"
RUN_DESTRUCTIVE = "ops.run_destructive_actions"
#: Console actions (actions.ACTIONS names) that need the destructive role.
DESTRUCTIVE = frozenset(
    {
        "failover",
        "split",
        "split-revert",
        "cleanup",
        "close-range",
        "rebuild",
        "reopen",
        "restore-shard",
        "backup-now",
    }
)
#: Console actions that change nothing (a comparison): no password asked again to run them.
READ_ONLY = frozenset({"diff"})
#: Each role's permissions (codenames of the ops app), made by migration 0003.
ROLES = {
    "viewer": ["view_journalentry"],
    "operator": ["view_journalentry", "run_actions"],
    "destructive": ["view_journalentry", "run_destructive_actions"],
}


def may_run(user: Any, action: str) -> bool:
    """Whether ``user`` may run (or plan) the console action named ``action``."""
    return bool(user.has_perm(RUN_DESTRUCTIVE if action in DESTRUCTIVE else RUN))


def may_end_operations(user: Any) -> bool:
    """Abort, resume or close an operation left open: as destructive as the operation."""
    return bool(user.has_perm(RUN_DESTRUCTIVE))


def job_role(kind: str) -> str:
    """The role that starts and resumes a job of ``kind`` (no such kind: the operator's,
    and the job is refused for that)."""
    known = job_kinds.kinds().get(kind)
    return "destructive" if known is not None and known.destructive else "operator"


def may_run_job(user: Any, kind: str) -> bool:
    return bool(user.has_perm(RUN_DESTRUCTIVE if job_role(kind) == "destructive" else RUN))


def role_needed(action: str) -> str:
    return "destructive" if action in DESTRUCTIVE else "operator"
