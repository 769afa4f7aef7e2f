"""The guard's watch over the replicas of the masters that answer (``guard.py`` watches the
masters and decides; this module keeps each range's replicas up to their number):

- a replica dead or broken (``replacement.trouble``) for ``replace_after`` seconds is
  replaced by a spare host: taken out of service, the spare rebuilt in its place. A
  range's replica replaced twice within the cool-down waits for a person;
- a master whose ranges name fewer replicas than ``wanted`` for as long (after an
  emergency failover, whose old master is out of service; the moved half of a split,
  which starts with none and commits alone) is given a spare as one more. Adding is no
  recovery from a failure: no cool-down, but a failed addition is tried again only after
  the cool-down, so that a copy that cannot succeed is not run again and again.

Each is a ``rebuild`` run (copy, catch up, compare, semi-sync, publish), journaled and
resumable, in a thread of its own: a copy takes minutes and the passes go on meanwhile.
One runs at a time per master, none while the guard is paused (it says what it would do),
and with no spare the guard says why and tries again every ``RETRY_SECONDS``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from ..exceptions import ShardStoreError
from ..replicas import replicas_of
from .context import Control
from .decision import Decision
from .mysql_hosts import HostError
from .plans import Plan, run
from .rebuild import plan_rebuild
from .replacement import find_spare, trouble

#: Seconds before a replacement or an addition the guard was refused is tried again.
RETRY_SECONDS = 30.0
#: Each duty's decisions: started, done, and what the past participle says when not.
KINDS = {"replace": ("replacing", "replaced"), "add": ("adding", "added")}


class Guardian(Protocol):
    """What of the guard (``guard.Guard``) the watch uses: its settings, its switch and
    its records."""

    control: Control
    author: str
    replace_after: float
    cool_down: float
    clock: Callable[[], float]

    def paused(self) -> bool: ...
    def decide(self, host: str, kind: str, evidence: str, detected: float | None = None, took: float | None = None) -> Decision: ...  # fmt: skip
    def keep(self, decision: Decision) -> None: ...
    def recorded(self, key: str) -> dict[str, Any] | None: ...


class ReplicaWatch:
    def __init__(self, guard: Guardian, *, wanted: int) -> None:
        self.guard = guard
        self.wanted = wanted
        self._troubled: dict[str, float] = {}  # replica -> since when it is dead or broken
        self._short: dict[str, float] = {}  # master -> since when it has too few replicas
        self._retry: dict[str, float] = {}  # host -> when a refused one may be tried again
        self._running: dict[str, threading.Thread] = {}  # master -> its rebuild running
        self._finished: list[Decision] = []  # the rebuilds' outcomes, for the next pass
        self._lock = threading.Lock()

    def finished(self) -> list[Decision]:
        """The outcomes of the rebuilds that ended since the last call (kept already)."""
        with self._lock:
            finished, self._finished = self._finished, []
        return finished

    def watch(self, document: dict[str, Any], master: str) -> list[Decision]:
        """What to do about the replicas of ``master``, a master that answers."""
        ranges = [r for r in document["ranges"] if r["master"] == master]
        named = sorted({name for r in ranges for name in replicas_of(r)})
        decisions = [d for replica in named if (d := self._replica(document, master, replica, ranges))]  # fmt: skip
        added = self._count(master, ranges) if not decisions else None
        return decisions + ([added] if added else [])

    def _busy(self, master: str) -> bool:
        running = self._running.get(master)
        return running is not None and running.is_alive()

    def _replica(self, document: dict[str, Any], master: str, replica: str, ranges: list[dict[str, Any]]) -> Decision | None:  # fmt: skip
        try:
            wrong = trouble(self.guard.control.mysql, document, replica)
        except HostError:
            wrong = None  # it answers with a refusal: alive
        now = self.guard.clock()
        if wrong is None:
            self._troubled.pop(replica, None)
            return None
        since = self._troubled.setdefault(replica, now)
        if now - since < self.guard.replace_after or self._busy(master):
            return None
        span = _span(ranges)
        evidence = f"{replica}, a replica of {master} ({span}), {wrong} for {now - since:.0f}s"
        if self.guard.paused():
            return self.guard.decide(replica, "replace-paused", f"{evidence}; the guard is paused: replace it by hand (shardstore rebuild SPARE --master {master})")  # fmt: skip
        recoveries, key = self.guard.recorded("recoveries") or {}, f"{span} replica"
        last = recoveries.get(key)
        if last is not None and now - float(last) < self.guard.cool_down:
            return self.guard.decide(replica, "replace-cooling-down", f"{evidence}; a replica of {span} was replaced {now - float(last):.0f}s ago (cool-down {self.guard.cool_down:.0f}s): it waits for a person")  # fmt: skip
        if now < self._retry.get(replica, 0.0):
            return None  # refused lately: its decision stands until then
        decision = self._start(replica, master, "replace", evidence, now - since, replaces=replica)  # fmt: skip
        if decision.kind == "replacing":
            self.guard.control.source.record("guard", "recoveries", {**recoveries, key: now})
            self._troubled.pop(replica, None)
        return decision

    def _count(self, master: str, ranges: list[dict[str, Any]]) -> Decision | None:
        fewest = min(len(replicas_of(r)) for r in ranges)
        now = self.guard.clock()
        if fewest >= self.wanted:
            self._short.pop(master, None)
            return None
        since = self._short.setdefault(master, now)
        if now - since < self.guard.replace_after or self._busy(master):
            return None
        have = f"{fewest} replica{'' if fewest == 1 else 's'}"
        evidence = f"{master} ({_span(ranges)}) has had {have} of the {self.wanted} wanted for {now - since:.0f}s"  # fmt: skip
        if self.guard.paused():
            return self.guard.decide(master, "add-paused", f"{evidence}; the guard is paused: add one by hand (shardstore rebuild SPARE --master {master})")  # fmt: skip
        if now < self._retry.get(master, 0.0):
            return None
        decision = self._start(master, master, "add", evidence, now - since)
        if decision.kind == "adding":
            self._short.pop(master, None)
        return decision

    def _start(self, host: str, master: str, verb: str, evidence: str, detected: float, *, replaces: str | None = None) -> Decision:  # fmt: skip
        """Find a spare and start its rebuild as ``master``'s replica (in ``replaces``'s
        place): ``replacing``/``adding``, or ``replace-``/``add-refused``."""
        control, guard = self.guard.control, self.guard
        try:
            spare, found = find_spare(control.source, control.mysql, control.provision, author=guard.author)  # fmt: skip
            plan = plan_rebuild(control.source, host=spare, master=master, replaces=replaces, author=guard.author, connect=control.mysql, store=control.backups)  # fmt: skip
        except ShardStoreError as exc:
            self._retry[host] = guard.clock() + RETRY_SECONDS
            return guard.decide(host, f"{verb}-refused", f"{evidence}; not {KINDS[verb][1]}: {exc}")
        thread = threading.Thread(target=self._rebuild, args=(plan, host, master, verb, evidence, detected), name=f"{verb} {host}", daemon=True)  # fmt: skip
        self._running[master] = thread
        thread.start()
        return guard.decide(host, KINDS[verb][0], f"{evidence}; {plan.summary}: {found}", detected)  # fmt: skip

    def _rebuild(self, plan: Plan, host: str, master: str, verb: str, evidence: str, detected: float) -> None:  # fmt: skip
        """Run a replacement or an addition (in its own thread) and keep what came of it."""
        control, guard, took = self.guard.control, self.guard, None
        try:
            outcome = run(plan, journal=control.journal, locks=control.locks, operator=guard.author)  # fmt: skip
            done = f"in {outcome.seconds:.1f}s" if outcome.ok else str(outcome.error)
            ok, took = outcome.ok, outcome.seconds if outcome.ok else None
        except ShardStoreError as exc:
            done, ok = str(exc), False
        if not ok:  # a copy that failed is not run again at once, for this range either
            self._retry[host] = self._retry[master] = guard.clock() + guard.cool_down
        decision = guard.decide(host, KINDS[verb][1] if ok else f"{verb}-failed", f"{evidence}; {plan.summary}: {done}", detected, took)  # fmt: skip
        guard.keep(decision)
        with self._lock:
            self._finished.append(decision)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the rebuilds running (a test's, or a guard's that stops)."""
        for thread in list(self._running.values()):
            thread.join(timeout)


def _span(ranges: list[dict[str, Any]]) -> str:
    return ", ".join(f"{r['range'][0]}-{r['range'][1]}" for r in ranges)
