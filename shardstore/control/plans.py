"""How every operation that changes where data lives is run: plan, lock, journal, steps.

An operation (open a range, fail over a host, split one, move Redis virtual
shards...) is a function that looks at the world and returns a ``Plan``: a
summary and a list of named ``Step``s, each saying which hosts it touches.
``run(plan, ...)`` then

1. with ``dry_run``: journals the plan as a dry run and stops there (the
   console and the commands show it, so an operator confirms what will happen);
2. else takes a lock on every host the plan touches (all or nothing, so two
   operations never touch one host at once: ``HostsBusy`` otherwise),
3. journals the start, runs the steps in order, journals each step's result,
4. journals the end (done, or failed at which step and why) and its duration.

A failed step stops the run. A step may say how to put back what it did (``undo``):
then the failed step and every step before it are undone, newest first, still under
the locks, each undo journaled, back to the last step that ``commits`` (after which
writes may land where the operation moved them, so it stands, and the steps after it
are clean-up that can be run again). A step that commits says how to tell whether it
is in force (``took_effect``): a run that died in it, before journaling it, is then
resumed, never undone. SIGINT or SIGTERM fails the step it interrupts, and a run stops
itself where the fault injector asks (``signals.py``). Undos open fresh connections and
are idempotent (the step they undo may have stopped anywhere).

A run that fails after its commit point, or whose undo failed, stays open for
``resume`` or ``abort`` (recovery.py). Each run draws a term once it holds its locks,
and claims with it every MySQL server it connects to (``terms.py``): a run whose locks
are gone (paused past its session) changes nothing on a server a newer run claimed.
It leaves a mark beside the locks (``locks.Mark``) until its entry is closed, so a run
open in another journal (the site's, a ``--journal`` file) holds its hosts as one open
in this journal does (``OperationOpen``). The journal is part of the undo path: a step
whose record cannot be written fails and is undone; an undo whose record cannot be
written still runs, as do those after it; a journal that cannot begin an entry refuses
the plan before anything changes (``JournalUnavailable``).

Every operation that publishes a config document also takes the ``CONFIG`` lock, so
no publish, rollback or other operation changes the map between its publishes (a hand
rollback cannot lift a split's read-only window). A lock is checked again before each
step: a ZooKeeper lock lost with its session stops the run before it changes more.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..exceptions import ShardStoreError
from . import terms
from .locks import CONFIG, HostsBusy, LockCheck, Locks, Mark, held_elsewhere, leave_mark, unmark_run
from .signals import (
    STOP_AFTER_STEP,
    STOP_IN_STEP,
    Interrupted,
    signals_deferred,
    signals_interrupt,
    stop_here,
)


class StepFailed(ShardStoreError):
    """A step of a plan raised; the journal holds the steps done before it."""


class JournalUnavailable(ShardStoreError):
    """The journal could not begin an entry: the plan is refused, nothing changed."""


@dataclass(frozen=True)
class Step:
    """One named thing an operation does, on these hosts (``run`` returns a short note).
    ``undo`` puts back what ``run`` did, or began to do, and returns a note."""

    name: str
    hosts: tuple[str, ...]
    run: Callable[[], str | None]
    undo: Callable[[], str | None] | None = None
    #: Once this step has run, the operation has taken effect (writes may land where it
    #: moved them): a later step's failure undoes nothing up to here.
    commits: bool = False
    #: For a step that commits: whether what it does is in force. A run that died in it
    #: may have got that far before journaling it; abort then must not undo it.
    took_effect: Callable[[], bool] | None = None


@dataclass(frozen=True)
class Plan:
    operation: str  # "open-range", "failover", ...
    summary: str  # one line: what changes, for the journal and the console
    steps: Sequence[Step]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def locks(self) -> tuple[str, ...]:
        """What ``run`` locks: every host a step touches, and ``CONFIG`` if one publishes."""
        return tuple(sorted({host for step in self.steps for host in step.hosts}))

    @property
    def hosts(self) -> tuple[str, ...]:
        return tuple(host for host in self.locks if host != CONFIG)

    def lines(self) -> list[str]:
        """The plan as an operator reads it: one numbered line per step, with its hosts."""
        lines = []
        for n, step in enumerate(self.steps, 1):
            hosts = [host for host in step.hosts if host != CONFIG]
            lines.append(f"{n}. {step.name}" + (f"  [{', '.join(hosts)}]" if hosts else ""))
        return lines

    def text(self) -> str:
        return "\n".join([self.summary, *self.lines()])


@dataclass
class Outcome:
    plan: Plan
    dry_run: bool
    ok: bool
    notes: list[str]  # what each step that ran reported
    error: str = ""
    seconds: float = 0.0
    entry: Any = None  # the journal's entry


@dataclass(frozen=True)
class OpenOperation:
    """A run the journal has no end for, because its process died part way (``kill -9``, a
    lost machine): until it is resumed or aborted (``recovery.py``), no operation may take
    one of its locks."""

    id: Any
    entry: Any  # the journal's handle
    operation: str
    summary: str
    operator: str
    locks: tuple[str, ...]
    params: dict[str, Any]
    steps: list[tuple[int, str, str]]  # as journaled, undos included

    @property
    def done(self) -> int:
        """The last step the journal says ran (0: none)."""
        return max(
            (index for index, name, _ in self.steps if not name.startswith("undo: ")), default=0
        )


class OperationOpen(HostsBusy):
    """A run that died part way holds what this plan would touch."""


class Journal(Protocol):
    """Where operations are written down (the console's journal; a list in tests)."""

    #: Which journal this is, as an operator would look for it ("the journal file ...").
    name: str

    def begin(self, plan: Plan, *, operator: str, dry_run: bool) -> Any:
        """A new entry for this plan (with its locks); returns its handle."""
        ...

    def step(self, entry: Any, index: int, name: str, note: str) -> None: ...

    def finish(self, entry: Any, *, ok: bool, result: str, seconds: float) -> None: ...

    def open_operations(self) -> list[OpenOperation]:
        """The entries of runs that neither finished nor are dry runs."""
        ...


def run(
    plan: Plan,
    *,
    journal: Journal,
    locks: Locks,
    operator: str,
    dry_run: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
) -> Outcome:
    """Journal the plan, and unless ``dry_run`` run it under its hosts' locks; a failed
    or interrupted step is undone with those before it, back to the commit point."""
    if not dry_run:  # the key of the run's mark in the lock service (locks.Mark)
        plan.params["mark"] = secrets.token_hex(8)
    try:
        entry = journal.begin(plan, operator=operator, dry_run=dry_run)
    except JournalUnavailable:
        raise
    except Exception as exc:
        raise JournalUnavailable(f"the journal cannot be written ({exc}): nothing was changed") from exc  # fmt: skip
    if dry_run:
        journal.finish(entry, ok=True, result="dry run: nothing changed", seconds=0.0)
        return Outcome(plan, True, True, [], entry=entry)
    started = time.monotonic()
    notes: list[str] = []
    left_open = False
    try:
        owner = f"{operator}: {plan.operation}"
        with locks.hold(plan.locks, owner=owner) as still_held:
            # Under the locks, an open run that shares one is dead: a live one holds them.
            _refuse_open(journal, entry, plan, locks)
            leave_mark(locks, Mark(plan.params["mark"], journal.name, plan.locks, f"{plan.summary} ({operator})"))  # fmt: skip
            with terms.running(terms.Term(locks.next_term(), owner, still_held)):
                error, left_open = _run_steps(plan, still_held, journal, entry, notes, progress)
    except HostsBusy as exc:
        error = str(exc)
    seconds = time.monotonic() - started
    if left_open:  # past its commit point: the entry stays open for ``resume``
        return Outcome(plan, False, False, notes, error, seconds, entry)
    result = error or f"{len(notes)} steps done"
    try:
        journal.finish(entry, ok=not error, result=result, seconds=seconds)
    except Exception as exc:  # noqa: BLE001 - the steps are done; the entry stays open
        error = f"{error or 'every step done'}; the journal could not record the end ({exc}): `resume` closes it"  # fmt: skip
        return Outcome(plan, False, False, notes, error, seconds, entry)
    unmark_run(locks, plan.params)
    return Outcome(plan, False, not error, notes, error, seconds, entry)


def _run_steps(
    plan: Plan,
    still_held: LockCheck,
    journal: Journal,
    entry: Any,
    notes: list[str],
    progress: Callable[[int, int, str], None] | None,
) -> tuple[str, bool]:
    """Run the steps; on a failure, undo what ran back to the commit point. The error (""
    if every step ran), and whether the run is past its commit point (left open)."""
    with signals_interrupt():
        for index, step in enumerate(plan.steps, 1):
            if progress:
                progress(index, len(plan.steps), step.name)
            try:
                still_held()
                note = step.run() or "done"
                stop_here(STOP_IN_STEP, index)
                # A step whose record is lost fails like any other: it is undone.
                journal.step(entry, index, step.name, note)
            except (Exception, KeyboardInterrupt, Interrupted) as exc:  # noqa: BLE001 - any failure is undone
                reason = str(exc) or type(exc).__name__
                if isinstance(exc, KeyboardInterrupt | Interrupted):
                    reason = "the operator's command was interrupted"
                error = f"step {index} ({step.name}) failed: {reason}"
                committed = max(
                    (n for n, s in enumerate(plan.steps[: index - 1], 1) if s.commits), default=0
                )
                if step.commits and _may_be_in_force(step):
                    committed = index
                undone, failed = _undo(
                    plan.steps[committed:index], journal, entry, first=committed + 1
                )
                error += failed or (f"; {undone} steps undone" if undone else "")
                if committed:
                    error += (
                        f" (after step {committed}, which took effect: it stands;"
                        f" `resume` finishes the operation)"
                    )
                elif failed:  # a half-undone run is left for ``abort``, which undoes again
                    error += "; `abort` undoes the rest"
                return error, bool(committed or failed)
            notes.append(note)
            stop_here(STOP_AFTER_STEP, index)
    return "", False


def _may_be_in_force(step: Step) -> bool:
    """Whether a committing step that failed may have taken effect (when it cannot tell,
    or its check fails too, it may: the run is then left for ``resume`` or ``abort``)."""
    if step.took_effect is None:
        return True
    try:
        return step.took_effect()
    except Exception:  # noqa: BLE001 - unknown is treated as in force
        return True


def _refuse_open(journal: Journal, entry: Any, plan: Plan, locks: Locks) -> None:
    """OperationOpen if a dead run holds one of the plan's locks: open in this journal, or
    marked open by another one. A mark of this journal's whose entry is closed was left by
    an ending that could not remove it: removed now."""
    here = journal.open_operations()
    for other in here:
        if other.entry != entry and set(other.locks) & set(plan.locks):
            raise OperationOpen(
                f"operation {other.id} ({other.summary}) was left open after step"
                f" {other.done} when its process died: `shardstore abort {other.id}` undoes"
                f" it, `shardstore resume {other.id}` finishes it (`shardstore operations`)"
            )
    mine = {other.params.get("mark") for other in here} | {plan.params.get("mark")}
    found = held_elsewhere(locks, journal.name, mine, plan.locks)
    if found is not None:
        raise OperationOpen(
            f"an operation is open in {found.journal}: {found.what}. End it there"
            " (`shardstore operations`, then `abort` or `resume` given that journal, or"
            " the console's Open operations page for the site's)"
        )


def undo_steps(plan: Plan, done: int, journal: Journal, entry: Any) -> int:
    """Undo what a run of ``plan`` that got to step ``done`` did (the step after it too,
    which it may have begun), newest first; how many steps were undone. Raises StepFailed
    if an undo failed, or if a step that commits had run."""
    reached = min(done + 1, len(plan.steps))
    committed = max((n for n, s in enumerate(plan.steps[:done], 1) if s.commits), default=0)
    committed = committed or in_effect_unjournaled(plan, done)
    if committed:
        raise StepFailed(f"step {committed} took effect: resume the operation, it cannot be undone")
    undone, failed = _undo(plan.steps[:reached], journal, entry, first=1)
    if failed:
        raise StepFailed(failed.removeprefix("; "))
    return undone


def in_effect_unjournaled(plan: Plan, done: int) -> int:
    """The step after ``done`` if it commits and is in force though the journal does not
    have it (its run died between the two), else 0."""
    if done >= len(plan.steps):
        return 0
    step = plan.steps[done]
    return done + 1 if step.commits and step.took_effect and step.took_effect() else 0


def _undo(done: Sequence[Step], journal: Journal, entry: Any, *, first: int) -> tuple[int, str]:
    """Undo ``done`` (steps ``first``...) newest first, signals held off: how many were
    undone, and what failed ("" if nothing did)."""
    undone, failed = 0, ""
    with signals_deferred():
        for index in range(first + len(done) - 1, first - 1, -1):
            step = done[index - first]
            if step.undo is None:
                continue
            try:
                note = step.undo() or "undone"
            except Exception as exc:  # noqa: BLE001 - journaled; the earlier undos still run
                # (a master left read-only because a later undo failed helps no one)
                failed += f"; undoing step {index} ({step.name}) failed: {exc}"
                note = f"FAILED: {exc}"
            else:
                undone += 1
            try:
                journal.step(entry, index, f"undo: {step.name}", note)
            except Exception as exc:  # noqa: BLE001 - a lost record stops no undo
                failed += f"; the journal lost the undo of step {index} ({exc})"
    return undone, failed + ("; see the journal" if failed else "")


# -- journals ---------------------------------------------------------------------


@dataclass(eq=False)  # an entry is itself: two runs of one plan are two entries
class JournalEntry:
    operation: str
    summary: str
    plan: list[str]
    operator: str
    dry_run: bool
    locks: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    steps: list[tuple[int, str, str]] = field(default_factory=list)
    ok: bool | None = None
    result: str = ""
    seconds: float = 0.0


class MemoryJournal:
    """A journal in a list: for scripts, drills and tests (the site keeps its own)."""

    name = "a journal in memory"

    def __init__(self) -> None:
        self.entries: list[JournalEntry] = []

    def begin(self, plan: Plan, *, operator: str, dry_run: bool) -> JournalEntry:
        entry = JournalEntry(
            plan.operation, plan.summary, plan.lines(), operator, dry_run, plan.locks, plan.params
        )
        self.entries.append(entry)
        return entry

    def step(self, entry: JournalEntry, index: int, name: str, note: str) -> None:
        entry.steps.append((index, name, note))

    def finish(self, entry: JournalEntry, *, ok: bool, result: str, seconds: float) -> None:
        entry.ok, entry.result, entry.seconds = ok, result, seconds

    def open_operations(self) -> list[OpenOperation]:
        return [
            OpenOperation(
                number, e, e.operation, e.summary, e.operator, e.locks, e.params, list(e.steps)
            )
            for number, e in enumerate(self.entries, 1)
            if e.ok is None and not e.dry_run
        ]
