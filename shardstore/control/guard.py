"""``shardstore guard``: recovery with no person in the loop, for a master or a replica
that died.

Two or more guards run (two processes on the local cluster, one per operator host in the
deploy); one is active, the one holding the ``guard`` lock (a ZooKeeper lock: it goes
with its holder's session, so a guard that dies or is cut off from ZooKeeper hands over,
and one cut off does nothing, since every pass checks it still holds the lock first).
Each pass of the active guard (``Guard.tick``):

1. resumes the failovers a guard began and did not finish (its process died part way):
   the journal holds them open, and ``resume`` finishes them as the CLI's would;
2. asks every MySQL master of the map whether it answers. One that has not answered for
   ``confirm_seconds`` is looked at from its replicas too, the same two vantage points as
   the emergency failover's: if a replica still receives from it, the guard is the one
   cut off, and it does nothing but say so (``ambiguous``);
3. otherwise runs the emergency failover the CLI runs (fence first, the candidate's
   checks, refused when they fail), unless the guard is paused (a switch in the config
   source, the console's and ``guard pause``'s) or this range was recovered less than
   ``cool_down`` seconds ago: a master that dies twice in that time waits for a person;
4. keeps the replicas of each master that answers up to their number
   (``replica_watch.py``): one dead or broken for ``replace_after`` seconds is replaced by
   a spare host, and a range short of replicas for as long is given one more, each in a
   thread of its own (a copy takes minutes), under the same pause; a range's replica
   replaced twice within the cool-down waits for a person. With no spare, the guard says
   why.

Every decision is kept with its evidence in the config source (``decisions``: the newest
``KEPT`` of them, for the console and ``guard status``); a failover or a replacement is
journaled as any operation is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from ..exceptions import InvalidTopology, ShardStoreError
from ..replicas import WANTED, replicas_of
from . import documents, recovery
from .config_source import ConfigSource
from .context import Control
from .decision import Decision
from .emergency import plan_emergency_failover
from .emergency_checks import answers
from .locks import HostsBusy
from .mysql_hosts import HostError, endpoint
from .plans import Plan, Step, run
from .replica_watch import RETRY_SECONDS, ReplicaWatch

#: Who the guard's runs and decisions are by, in the journal.
GUARD = "guard"
#: The config source's records: ``pause``, ``recoveries``, ``decisions``.
KIND = "guard"
#: The lock the active guard holds.
LEADER = "guard"
#: How many decisions the record keeps.
KEPT = 50
#: Seconds a master goes unanswered before the guard looks at it from its replicas (a
#: restart, a blip of the network, are not failures).
CONFIRM_SECONDS = 5.0
#: Seconds after an automatic recovery of a range in which a second one waits for a person.
COOL_DOWN_SECONDS = 600.0
#: Seconds a replica is dead or broken before the guard replaces it (a restart is not).
REPLACE_AFTER_SECONDS = 120.0


class Guard:
    def __init__(
        self,
        control: Control,
        *,
        confirm_seconds: float = CONFIRM_SECONDS,
        cool_down: float = COOL_DOWN_SECONDS,
        replace_after: float = REPLACE_AFTER_SECONDS,
        wanted: int = WANTED,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.control = control
        self.author = GUARD
        self.confirm_seconds = confirm_seconds
        self.cool_down = cool_down
        self.replace_after = replace_after
        self.clock = clock
        self.replicas = ReplicaWatch(self, wanted=wanted)
        self._unanswered: dict[str, float] = {}  # master -> when it first did not answer
        self._retry: dict[str, float] = {}  # master -> when a refused failover may be tried again
        self._keeping = threading.Lock()  # the passes and the rebuilds' threads keep decisions

    def tick(self) -> list[Decision]:
        """One pass over the map (the caller holds the ``LEADER`` lock); what it decided,
        after the outcomes of the replicas' rebuilds that ended since the last pass (kept
        already)."""
        finished = self.replicas.finished()
        decisions = self._resume_left_open()
        document = self.control.source.current(documents.SHARDS).document
        masters = [m for m in sorted({r["master"] for r in document["ranges"]}) if str(document["hosts"][m]).startswith("mysql://")]  # fmt: skip
        for master in masters:
            decision = self._watch(document, master)
            if decision is not None:
                decisions.append(decision)
        for master in masters:
            if master in self._unanswered:
                continue  # its replicas are the failover's to judge
            decisions += self.replicas.watch(document, master)
        for decision in decisions:
            self.keep(decision)
        return finished + decisions

    def _watch(self, document: dict[str, Any], master: str) -> Decision | None:
        connect, addresses = self.control.mysql, document["hosts"]
        try:
            if answers(connect, master, addresses[master]):
                self._unanswered.pop(master, None)
                return None
        except HostError:
            return None  # it answers with a refusal: alive
        now = self.clock()
        since = self._unanswered.setdefault(master, now)
        if now - since < self.confirm_seconds:
            return None
        ranges = [r for r in document["ranges"] if r["master"] == master]
        span = ", ".join(f"{r['range'][0]}-{r['range'][1]}" for r in ranges)
        seeing = self._still_receiving(document, master, ranges)
        if seeing:
            return self.decide(master, "ambiguous", f"{master} has not answered the guard for {now - since:.0f}s, but {' and '.join(seeing)} still {'receives' if len(seeing) == 1 else 'receive'} from it: the guard may be the one cut off, so it does nothing")  # fmt: skip
        if self.paused():
            return self.decide(master, "paused", f"{master} ({span}) has not answered for {now - since:.0f}s; the guard is paused: fail it over by hand")  # fmt: skip
        last = (self.recorded("recoveries") or {}).get(span)
        if last is not None and now - float(last) < self.cool_down:
            return self.decide(master, "cooling-down", f"{span} was recovered {now - float(last):.0f}s ago (cool-down {self.cool_down:.0f}s): {master} waits for a person")  # fmt: skip
        if now < self._retry.get(master, 0.0):
            return None  # refused lately: its decision stands until then
        decision = self._fail_over(master, span, f"{master} has not answered for {now - since:.0f}s and no replica receives from it", now - since)  # fmt: skip
        if decision.kind in ("refused", "failed"):
            self._retry[master] = now + RETRY_SECONDS
        return decision

    def _still_receiving(
        self, document: dict[str, Any], master: str, ranges: list[dict[str, Any]]
    ) -> list[str]:
        """The replicas of ``master`` whose I/O thread still receives from it."""
        source = "{}:{}".format(*endpoint(document["hosts"][master]))
        seeing = []
        for name in sorted({name for r in ranges for name in replicas_of(r)}):
            try:
                with self.control.mysql(document["hosts"][name]) as replica:
                    status = replica.replica_status()
            except HostError:
                continue  # silent too: the failover's checks judge it
            if status is not None and status.source == source and status.io_state == "Yes":
                seeing.append(name)
        return seeing

    def _fail_over(self, master: str, span: str, evidence: str, detected: float) -> Decision:
        control = self.control
        try:
            plan = plan_emergency_failover(
                control.source, host=master, author=GUARD, fence=control.fence, connect=control.mysql
            )  # fmt: skip
        except ShardStoreError as exc:
            return self.decide(master, "refused", f"{evidence}; the emergency failover refuses: {exc}")  # fmt: skip
        recoveries = self.recorded("recoveries") or {}
        control.source.record(KIND, "recoveries", {**recoveries, span: self.clock()})
        try:
            outcome = run(plan, journal=control.journal, locks=control.locks, operator=GUARD)
        except HostsBusy as exc:  # a replacement of one of its replicas, say
            return self.decide(master, "refused", f"{evidence}; {exc}")
        self._unanswered.pop(master, None)
        if not outcome.ok:
            return self.decide(master, "failed", f"{evidence}; {plan.summary}: {outcome.error}")
        return self.decide(master, "failover", f"{evidence}; {plan.summary} in {outcome.seconds:.1f}s", detected, outcome.seconds)  # fmt: skip

    def _resume_left_open(self) -> list[Decision]:
        """Finish the guard's runs whose process died: another guard took over."""
        control, decisions = self.control, []
        for operation in control.journal.open_operations():
            if operation.operator != GUARD or recovery.state(operation, control.locks) != "left open":  # fmt: skip
                continue
            master = str(operation.params.get("host", ""))
            try:
                done = recovery.end(
                    operation.id, "resume", source=control.source, journal=control.journal,
                    locks=control.locks, operator=GUARD, connect=control.mysql, fence=control.fence,
                )  # fmt: skip
            except ShardStoreError as exc:
                decisions.append(self.decide(master, "failed", f"resuming operation {operation.id}: {exc}"))  # fmt: skip
                continue
            decisions.append(self.decide(master, "resumed", f"operation {operation.id} ({operation.summary}), left open by a guard that died: {done}"))  # fmt: skip
        return decisions

    # -- the switch and the records ---------------------------------------------------

    def paused(self) -> bool:
        return bool(status(self.control.source).pause.get("paused"))

    def set_paused(self, paused: bool, *, by: str, reason: str) -> None:
        record = {"paused": paused, "by": by, "reason": reason, "at": self.clock()}
        self.control.source.record(KIND, "pause", record)

    def decisions(self) -> list[Decision]:
        """The kept decisions, newest first."""
        return status(self.control.source).decisions

    def decide(
        self,
        host: str,
        kind: str,
        evidence: str,
        detected: float | None = None,
        took: float | None = None,
    ) -> Decision:
        return Decision(host, kind, evidence, self.clock(), detected, took)

    def keep(self, decision: Decision) -> None:
        """Keep ``decision`` first; the same decision about the same host, made again at
        each pass, takes the place of the one before rather than a place of its own."""
        with self._keeping:
            kept = self.decisions()
            again = next((d for d in kept if d.host == decision.host), None)
            if again is not None and again.kind == decision.kind:
                kept.remove(again)
            else:  # a new decision: counted (a metric's counter, by kind)
                counts = self.recorded("counts") or {}
                self.control.source.record(KIND, "counts", {**counts, decision.kind: int(counts.get(decision.kind, 0)) + 1})  # fmt: skip
            record = [asdict(d) for d in [decision, *kept][:KEPT]]
            self.control.source.record(KIND, "decisions", {"decisions": record})

    def beat(self, instance: str) -> None:
        """Record that ``instance``, the active guard, has made a pass (its metric's age)."""
        self.control.source.record(KIND, "leader", {"instance": instance, "at": self.clock()})

    def recorded(self, key: str) -> dict[str, Any] | None:
        return self.control.source.recorded(KIND, key)


@dataclass(frozen=True)
class Status:
    """What the console, the metrics and ``guard status`` show of the guard."""

    pause: dict[str, Any]  # paused, by, reason, at ({} if never set)
    decisions: list[Decision]  # newest first
    leader: dict[str, Any]  # the active guard's last pass: instance, at ({} if none yet)
    counts: dict[str, int]  # decisions made, by kind (a decision made again counts once)


def status(source: ConfigSource) -> Status:
    kept = (source.recorded(KIND, "decisions") or {}).get("decisions", [])
    # (Records of earlier releases name the host ``master``.)
    decisions = [Decision(d.get("host", d.get("master", "")), d["kind"], d["evidence"], d["at"], d.get("detected"), d.get("took")) for d in kept]  # fmt: skip
    counts = {kind: int(n) for kind, n in (source.recorded(KIND, "counts") or {}).items()}
    return Status(source.recorded(KIND, "pause") or {}, decisions, source.recorded(KIND, "leader") or {}, counts)  # fmt: skip


def plan_pause(guard: Guard, *, paused: bool, reason: str, author: str) -> Plan:
    """Pause the guard (it then decides, and says so, but fails nothing over) or let it go
    on: an operation of its own, so that it is planned, confirmed and journaled."""
    what = "pause the guard" if paused else "let the guard fail dead masters over again"
    if guard.paused() == paused:
        raise InvalidTopology(f"the guard is {'paused' if paused else 'not paused'} already")

    def switch() -> str:
        guard.set_paused(paused, by=author, reason=reason)
        return f"the guard is {'paused' if paused else 'watching'}: {reason}"

    return Plan("guard-pause", f"{what}: {reason}", [Step(what, (), switch)], {"paused": paused})


def keep_watch(
    guard: Guard,
    *,
    instance: str,
    interval: float,
    passes: int | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> None:
    """Be one of the guards: pass after pass, every ``interval`` seconds, as the active one
    while this process holds the ``LEADER`` lock, else waiting for it (``passes``: stop
    after that many, for a test)."""
    locks, done = guard.control.locks, 0
    said: dict[str, str] = {}  # master -> the kind of the last pass's decision about it
    while passes is None or done < passes:
        try:
            with locks.hold([LEADER], owner=f"{GUARD} {instance}") as still_held:
                say(f"{instance} is the active guard")
                while passes is None or done < passes:
                    still_held()  # cut off from ZooKeeper: LockLost, and nothing is done
                    decisions = guard.tick()
                    for decision in decisions:  # a decision made again is said once
                        if said.get(decision.host) != decision.kind:
                            say(f"{decision.kind} {decision.host}: {decision.evidence}")
                    said = {d.host: d.kind for d in decisions}
                    guard.beat(instance)
                    done += 1
                    time.sleep(interval)
        except HostsBusy:
            done += 1  # another guard is active (or ZooKeeper cannot be reached)
            time.sleep(interval)
        except ShardStoreError as exc:
            say(f"{instance} stood down: {exc}")
            time.sleep(interval)
