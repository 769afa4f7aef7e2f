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

A failed step stops the run; the steps before it stay done, and the journal
says exactly how far it got (operations put their irreversible step last, and
say in their docstring how to resume or revert).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..exceptions import ShardStoreError


class HostsBusy(ShardStoreError):
    """Another operation holds a lock on a host this plan touches."""


class StepFailed(ShardStoreError):
    """A step of a plan raised; the journal holds the steps done before it."""


@dataclass(frozen=True)
class Step:
    """One named thing an operation does, on these hosts (``run`` returns a short note)."""

    name: str
    hosts: tuple[str, ...]
    run: Callable[[], str | None]


@dataclass(frozen=True)
class Plan:
    operation: str  # "open-range", "failover", ...
    summary: str  # one line: what changes, for the journal and the console
    steps: Sequence[Step]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def hosts(self) -> tuple[str, ...]:
        return tuple(sorted({host for step in self.steps for host in step.hosts}))

    def lines(self) -> list[str]:
        """The plan as an operator reads it: one numbered line per step, with its hosts."""
        return [
            f"{n}. {step.name}" + (f"  [{', '.join(step.hosts)}]" if step.hosts else "")
            for n, step in enumerate(self.steps, 1)
        ]

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


class Journal(Protocol):
    """Where operations are written down (the console's journal; a list in tests)."""

    def begin(self, plan: Plan, *, operator: str, dry_run: bool) -> Any:
        """A new entry for this plan; returns its handle."""
        ...

    def step(self, entry: Any, index: int, name: str, note: str) -> None: ...

    def finish(self, entry: Any, *, ok: bool, result: str, seconds: float) -> None: ...


class Locks(Protocol):
    def hold(self, hosts: Sequence[str], *, owner: str) -> contextlib.AbstractContextManager[None]:
        """Hold every host's lock for the block, or raise HostsBusy at once."""
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
    """Journal the plan, and unless ``dry_run`` run it under its hosts' locks."""
    entry = journal.begin(plan, operator=operator, dry_run=dry_run)
    if dry_run:
        journal.finish(entry, ok=True, result="dry run: nothing changed", seconds=0.0)
        return Outcome(plan, True, True, [], entry=entry)
    started = time.monotonic()
    notes: list[str] = []
    try:
        with locks.hold(plan.hosts, owner=f"{operator}: {plan.operation}"):
            for index, step in enumerate(plan.steps, 1):
                if progress:
                    progress(index, len(plan.steps), step.name)
                try:
                    note = step.run() or "done"
                except Exception as exc:
                    raise StepFailed(f"step {index} ({step.name}) failed: {exc}") from exc
                notes.append(note)
                journal.step(entry, index, step.name, note)
    except (HostsBusy, StepFailed) as exc:
        seconds = time.monotonic() - started
        journal.finish(entry, ok=False, result=str(exc), seconds=seconds)
        return Outcome(plan, False, False, notes, str(exc), seconds, entry)
    seconds = time.monotonic() - started
    journal.finish(entry, ok=True, result=f"{len(notes)} steps done", seconds=seconds)
    return Outcome(plan, False, True, notes, seconds=seconds, entry=entry)


# -- locks ------------------------------------------------------------------------


class FileLocks:
    """Host locks as ``flock``ed files in a directory: every process of one machine (the
    embedded default, the local cluster) sees them; the kernel drops a dead holder's."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    @contextlib.contextmanager
    def hold(self, hosts: Sequence[str], *, owner: str) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as held:
            for host in sorted(set(hosts)):
                path = self.directory / f"{_safe(host)}.lock"
                handle = held.enter_context(open(path, "a+"))
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    handle.seek(0)
                    holder = handle.read() or "another operation"
                    raise HostsBusy(f"host {host} is locked by: {holder}") from None
                handle.truncate(0)
                handle.write(f"{owner} (pid {os.getpid()})")
                handle.flush()
            yield


class ZooKeeperLocks:
    """Host locks as kazoo lock recipes under ``<root>/locks/<host>``: held by a live
    ZooKeeper session, so a crashed operator's locks go with its session."""

    def __init__(self, client: Any, root: str) -> None:
        self.client = client
        self.root = "/" + root.strip("/")

    @contextlib.contextmanager
    def hold(self, hosts: Sequence[str], *, owner: str) -> Iterator[None]:
        acquired = []
        try:
            for host in sorted(set(hosts)):
                lock = self.client.Lock(f"{self.root}/locks/{_safe(host)}", identifier=owner)
                if not lock.acquire(blocking=False):
                    holders = ", ".join(lock.contenders()) or "another operation"
                    raise HostsBusy(f"host {host} is locked by: {holders}")
                acquired.append(lock)
            yield
        finally:
            for lock in reversed(acquired):
                lock.release()


def _safe(host: str) -> str:
    """A host name as a file or znode name."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in host)


# -- journals ---------------------------------------------------------------------


@dataclass
class JournalEntry:
    operation: str
    summary: str
    plan: list[str]
    operator: str
    dry_run: bool
    steps: list[tuple[int, str, str]] = field(default_factory=list)
    ok: bool | None = None
    result: str = ""
    seconds: float = 0.0


class MemoryJournal:
    """A journal in a list: for scripts, drills and tests (the site keeps its own)."""

    def __init__(self) -> None:
        self.entries: list[JournalEntry] = []

    def begin(self, plan: Plan, *, operator: str, dry_run: bool) -> JournalEntry:
        entry = JournalEntry(plan.operation, plan.summary, plan.lines(), operator, dry_run)
        self.entries.append(entry)
        return entry

    def step(self, entry: JournalEntry, index: int, name: str, note: str) -> None:
        entry.steps.append((index, name, note))

    def finish(self, entry: JournalEntry, *, ok: bool, result: str, seconds: float) -> None:
        entry.ok, entry.result, entry.seconds = ok, result, seconds


def locks_for(source: Any) -> Locks:
    """Host locks that every process using ``source`` sees: kazoo locks beside a ZooKeeper
    source's documents, file locks beside a directory's."""
    from .file_source import FileSource
    from .zookeeper_source import ZooKeeperSource

    if isinstance(source, ZooKeeperSource):
        return ZooKeeperLocks(source.client, source.root)
    if isinstance(source, FileSource):
        return FileLocks(source.root / "locks")
    raise TypeError(f"no locks for a {type(source).__name__}")
