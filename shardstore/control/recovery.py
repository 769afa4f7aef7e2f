"""Runs that died part way (``kill -9`` of the operator's command, a worker recycled, a
lost machine): the journal holds their entry open, and no operation may take one of their
locks until an operator ends it here, from the command line or the console.

- ``operations``: the open runs, and whether each still runs (a live run holds its
  locks) or was left open (its locks are free);
- ``abort OP``: undo what the run did, as a failure would have (``plans.undo_steps``):
  the steps the journal has and the one after it, which it may have begun, newest
  first; every undo is idempotent, so an abort cut short is run again;
- ``resume OP``: finish a run that got past the step that commits it (a planned
  failover's or a split's final publish), or failed after it, or any run of an operation
  whose every step can run again (a rebuild, a cleanup): run the steps after the last one the
  journal has (a committing step the journal lacks but that is in force, the run having
  died in it, is not run again, and abort refuses to undo it). So a committing step
  does the one thing its ``took_effect`` checks, and what must follow it (an emergency
  failover's promotion after its replication reset) is a step of its own after it,
  which can run again and which resume runs. A run whose every step the journal has
  (it died, or lost its journal, before its end was written) is closed as done;
- ``abort OP --close``: close the entry and undo nothing, for an operation that cannot
  be planned again once the operator has put things right by hand (the journal says so).

Both plan the operation again as it was planned (from the shard map it began with,
``base``): planned failover, split, revert, and emergency failover as it chose its
replica. An emergency failover stands once it reset the replica's replication (it
cannot follow the old master again), a run killed inside that step included: resume it,
which arms the replica's semi-sync, clears its read_only and publishes. Before that
there is nothing to undo: abort it, and run it again (a replica it stopped after it lost
the master still counts as one that was replicating until the failure).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

from ..backups.store import open_store
from ..exceptions import InvalidTopology
from . import documents, terms
from .config_source import ConfigSource
from .diff import plan_diff
from .durability_change import plan_durability
from .emergency import plan_emergency_again
from .failover import Connect, plan_failover
from .fencing import Fence
from .locks import HostsBusy, LockCheck, Locks, unmark_run
from .plans import (
    Journal,
    OpenOperation,
    Plan,
    StepFailed,
    in_effect_unjournaled,
    undo_steps,
)
from .rebuild import plan_rebuild
from .restore import plan_restore
from .split import plan_split
from .split_cleanup import plan_cleanup
from .split_revert import plan_split_revert


def state(operation: OpenOperation, locks: Locks) -> str:
    """ "running" if a live run holds its locks, else "left open"."""
    try:
        with locks.hold(operation.locks, owner="a look at the open operations"):
            return "left open"
    except HostsBusy:
        return "running"


def plan_again(
    operation: OpenOperation,
    source: ConfigSource,
    *,
    author: str,
    connect: Connect,
    fence: Fence | None = None,
) -> Plan:
    """The plan of a dead run, made again from the shard map it began with."""
    params = operation.params
    if operation.operation == "cleanup":  # it publishes nothing: planned again on the map in force
        store = open_store(str(params["store"])) if params.get("store") else None
        return plan_cleanup(source, split=int(params["split"]), author=author, connect=connect, store=store, without_backup=bool(params.get("without_backup")))  # fmt: skip
    if "base" not in params:
        raise InvalidTopology(
            f"operation {operation.id} ({operation.operation}) cannot be planned again: see its journal"
        )
    if params.get("emergency"):
        return plan_emergency_again(source, params, author=author, fence=fence, connect=connect)
    base = source.revision(documents.SHARDS, int(params["base"]))
    # A failover or a split planned again hands the shards to the replica it chose.
    handed = {"host": params.get("host", ""), "to": params.get("replica"), "author": author}
    build: dict[str, Callable[[], Plan]] = {
        "failover": lambda: plan_failover(source, **handed, connect=connect, base=base),
        "split": lambda: plan_split(source, **handed, connect=connect, base=base),
        "split-revert": lambda: plan_split_revert(
            source, split=int(params["split"]), author=author, connect=connect, base=base
        ),
        "rebuild": lambda: plan_rebuild(
            source, host=params["host"], author=author, connect=connect, base=base, params=params
        ),
        "durability": lambda: plan_durability(
            source,
            shards=tuple(params["shards"]),
            policy=params["policy"],
            author=author,
            connect=connect,
            base=base,
        ),
        "diff": lambda: plan_diff(
            source, a=params["a"], b=params["b"], shards=tuple(params["shards"]), connect=connect
        ),
        "restore": lambda: plan_restore(
            source,
            open_store(params["store"]),
            span=list(params["span"]),
            onto=list(params["onto"]),
            author=author,
            to_time=params["to_time"],
            to_gtid=params["to_gtid"],
            connect=connect,
            base=base,
        ),
    }
    if operation.operation not in build:
        raise InvalidTopology(
            f"operation {operation.id} ({operation.operation}) cannot be planned again"
        )
    return build[operation.operation]()


def abort(
    operation: OpenOperation, plan: Plan, *, journal: Journal, locks: Locks, operator: str
) -> str:
    """Undo a dead run and close its entry; what was done. Raises if an undo failed (the
    entry stays open: abort again) or if the run had taken effect (resume it)."""
    started = time.monotonic()
    owner = f"{operator}: abort {operation.id}"
    with locks.hold(operation.locks, owner=owner) as held, _term(locks, owner, held):
        undone = undo_steps(plan, operation.done, journal, operation.entry)
        result = f"aborted by {operator} after step {operation.done}: {undone} steps undone"
        journal.finish(operation.entry, ok=False, result=result, seconds=time.monotonic() - started)
    unmark_run(locks, operation.params)
    return result


def close(operation: OpenOperation, *, journal: Journal, locks: Locks, operator: str) -> str:
    """Close a dead run's entry, undoing nothing: the operator says it is put right."""
    result = f"closed by {operator} after step {operation.done}, nothing undone"
    journal.finish(operation.entry, ok=False, result=result, seconds=0.0)
    unmark_run(locks, operation.params)
    return result


def resume(
    operation: OpenOperation, plan: Plan, *, journal: Journal, locks: Locks, operator: str
) -> str:
    """Run the rest of a dead run that had taken effect, and close its entry."""
    done = operation.done
    in_effect = in_effect_unjournaled(plan, done)  # the run died in it, after it took effect
    rerunnable = bool(plan.params.get("rerunnable"))  # every step can run again
    finished = done >= len(plan.steps)  # it died, or lost its journal, after its last step
    if not (in_effect or rerunnable or finished) and not any(s.commits for s in plan.steps[:done]):
        raise StepFailed(
            f"operation {operation.id} had not taken effect at step {done}: abort it instead"
        )
    started = time.monotonic()
    owner = f"{operator}: resume {operation.id}"
    with locks.hold(operation.locks, owner=owner) as held, _term(locks, owner, held):
        for index, step in enumerate(plan.steps[done:], done + 1):
            if index == in_effect:
                note = "in effect already (its run died before journaling it)"
            else:
                note = step.run() or "done"
            journal.step(operation.entry, index, step.name, note)
        result = f"resumed by {operator} after step {done}: {len(plan.steps)} steps done"
        journal.finish(operation.entry, ok=True, result=result, seconds=time.monotonic() - started)
    unmark_run(locks, operation.params)
    return result


def _term(locks: Locks, owner: str, held: LockCheck) -> contextlib.AbstractContextManager[None]:
    """A new term for an ending: it claims the servers from the run it ends (terms.py)."""
    return terms.running(terms.Term(locks.next_term(), owner, held))


#: How an open operation may be ended: undone, finished, or closed as put right by hand.
ENDINGS = ("abort", "resume", "close")


def end(
    operation_id: object,
    how: str,
    *,
    source: ConfigSource,
    journal: Journal,
    locks: Locks,
    operator: str,
    connect: Connect,
    fence: Fence | None = None,
) -> str:
    """Abort, resume or close the open operation ``operation_id`` (the command line's and
    the console's way alike); what was done. InvalidTopology if there is no such open
    operation or it still runs; StepFailed if an undo or a step failed (it stays open)."""
    found = next((op for op in journal.open_operations() if str(op.id) == str(operation_id)), None)  # fmt: skip
    if found is None:
        raise InvalidTopology(f"no open operation {operation_id} (see `operations`)")
    if how not in ENDINGS:
        raise InvalidTopology(f"an open operation is ended by {', '.join(ENDINGS)}, not {how!r}")
    if state(found, locks) == "running":
        raise InvalidTopology(f"operation {found.id} is still running: its locks are held")
    if how == "close":
        return close(found, journal=journal, locks=locks, operator=operator)
    plan = plan_again(found, source, author=operator, connect=connect, fence=fence)
    ending = abort if how == "abort" else resume
    return ending(found, plan, journal=journal, locks=locks, operator=operator)
