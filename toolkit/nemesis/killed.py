"""e. The operator's command killed (``kill -9``) part way, then ended by ``abort`` or
``resume``.

``shardstore failover``, ``split`` and ``split --revert`` are killed right after each step
they journal but the last, then ended by ``abort`` (``resume`` where abort refuses: a step
that commits had run): the shards take a write within 5 s of that command being run, the
pair replicates (where the operation keeps one), nothing is left open. The split and the
revert are killed inside their final publish (done, not journaled) rather than after it,
and the planned failover both after its last step and inside its publish: resumed, never
undone (the failover then failed back). Then the revert's ``cleanup`` is killed inside
a drop, and the rebuild of the replica the revert left out of service inside its copy:
each resumed (every step of theirs can run again), the pair replicating at the end.
"""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass

from toolkit.drills.base import SETTLE, WARM_UP, DrillError, Result

from .base import Nemesis, writable_within
from .operator import PLAN_STEP, Split, fail_back, left_open, open_operations, pair_state

#: Issue bound: the affected shards take a write within this many seconds of abort/resume.
WRITABLE = 5.0
CAP = 1500.0  # the load runs through every kill of case e (minutes), never longer
HORIZON = 30.0  # how long an ending is watched for a first write, bound or not
_PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] (.*) \(at \+[\d.]+s\)$", re.MULTILINE)


@dataclass
class _Ended:
    """One kill and its ending: the plan's steps, ``abort`` or ``resume`` (and whether abort
    refused first), how long the ending ran, and seconds from its start to the first write
    on every affected group (None: none within ``HORIZON``)."""

    steps: int
    ending: str
    refused: bool
    ran: float
    writable: float | None

    @property
    def late(self) -> bool:
        return self.writable is None or self.writable > WRITABLE

    def text(self) -> str:
        took = f"no write in {HORIZON:g} s" if self.writable is None else f"{self.writable:.2f} s"
        return f"{self.ending} ran {self.ran:.1f} s, writable {took} after it was run"


def _kill_and_end(n: Nemesis, s: Split, command: list[str], step: int, groups: list[str], *, inside: bool = False, resume: bool = False) -> _Ended:  # fmt: skip
    """``command`` run and killed after ``step`` (``inside`` it: run, not journaled), then
    aborted (resumed if abort refuses), or resumed straight away with ``resume``."""
    killed = n.manage_until_step(step, "shardstore", *command, inside=inside)
    progress = _PROGRESS.findall(killed.output)
    where = f"{'in' if inside else 'after'} step {step}"
    if killed.returncode != -signal.SIGKILL or not progress:
        raise DrillError(f"{' '.join(command)} was not killed {where}: exit {killed.returncode}: {killed.tail(5)}")  # fmt: skip
    operation = left_open(n, f"{' '.join(command)} killed {where}")
    if operation["after_step"] != step - inside:
        raise DrillError(f"operation {operation['id']} journaled up to step {operation['after_step']}, killed {where}")  # fmt: skip
    began, refused = time.monotonic(), False
    if not resume:
        ran = n.manage("shardstore", "abort", str(operation["id"]))
        refused = ran.returncode != 0 and "resume the operation" in ran.output
    if resume or refused:
        began = time.monotonic()
        ran = n.manage("shardstore", "resume", str(operation["id"]))
    ending = "resume" if resume or refused else "abort"
    if ran.returncode != 0:
        raise DrillError(f"{ending} {operation['id']} after step {step}: exit {ran.returncode}: {ran.tail(5)}")  # fmt: skip
    took = [writable_within(s.load, g, began, HORIZON) for g in groups]
    writable = None if None in took else max(t for t in took if t is not None)
    return _Ended(int(progress[0][1]), ending, refused, ran.seconds, writable)


#: What the pair is after an ending: replicating, two masters (a split stands), or no pair.
REPLICATING, TWO_MASTERS = "replicating", "two masters"


def _killed_each_step(
    n: Nemesis, result: Result, s: Split, what: str, command: list[str], groups: list[str],
    pair: Mapping[str, str | None], *, inside_commit: bool = False,
) -> None:  # fmt: skip
    """``command`` killed after each step but the last, then ended; ``pair``: what the pair
    is after each ending (``abort``, ``resume``), None where there is none to check. With
    ``inside_commit``, killed inside its final publish (done, not journaled) instead of
    after it."""
    plan = PLAN_STEP.findall(n.manage("shardstore", *command, "--dry-run").output)
    publishes = [int(k) for k, name in plan if name.startswith("publish shard map")]
    commit = max(publishes, default=0) if inside_commit else 0
    step, total, kills, worst, problems = 1, 2, 0, 0.0, []
    while step < total:
        inside = step == commit
        where = f"{'inside' if inside else 'after'} step {step}"
        n.say(f"{what}: kill -9 {where}")
        ended = _kill_and_end(n, s, command, step, groups, inside=inside)
        total, kills = ended.steps, kills + 1
        figure = f"{what} killed {where}/{total}: {ended.text()}"
        if ended.late and ended.ending == "abort":  # measured once more, both figures shown
            ended = _kill_and_end(n, s, command, step, groups, inside=inside)
            kills += 1
            figure += f"; killed and aborted again: {ended.text()}"
        if ended.late:
            problems.append(f"step {step}: not writable within {WRITABLE:g} s")
        worst = max(worst, HORIZON if ended.writable is None else ended.writable)
        expected = pair.get(ended.ending)
        if expected is not None:
            ok, measured = pair_state(n, s.host, s.replica, replicating=expected == REPLICATING)
            figure += f"; {measured}"
            if not ok:
                problems.append(f"step {step}: {measured}")
        if ended.refused:
            figure += " (abort refused: a step that commits had run)"
        left = open_operations(n)
        if left:
            problems.append(f"step {step}: operations still open: {left}")
        result.figure(figure)
        if ended.ending == "resume":  # it stands, finished: no later step to kill it after
            break
        step += 1
    result.bound(
        f"{what}: each kill ended, writable within {WRITABLE:g} s, pair as expected, nothing open",
        not problems,
        "; ".join(problems) or f"{kills} kills, longest {worst:.2f} s until writable",
    )


def _failover_past_its_commit(n: Nemesis, result: Result, s: Split) -> None:
    """The planned failover killed inside its publish (done, not journaled) and after its
    last step: abort refuses, resume finishes, the pair is turned round; then it is failed
    back, so the split finds the pair as it was."""
    fail_back(n, s)  # the kill after the publish, above, was resumed: the failover stood
    plan = PLAN_STEP.findall(n.manage("shardstore", "failover", s.host, "--dry-run").output)
    publish = next((int(k) for k, name in plan if name.startswith("publish shard map")), 0)
    if not publish:
        raise DrillError(f"the failover's plan has no publish: {plan}")
    problems = []
    for step, inside in ((publish, True), (len(plan), False)):
        where = f"{'inside' if inside else 'after'} step {step}"
        n.say(f"failover: kill -9 {where}")
        ended = _kill_and_end(n, s, ["failover", s.host], step, [s.moving, s.staying], inside=inside)  # fmt: skip
        ok, measured = pair_state(n, s.replica, s.host, replicating=True)
        result.figure(f"failover killed {where}/{ended.steps}: {ended.text()}; {measured}")
        if ended.ending != "resume" or not ended.refused:
            problems.append(f"{where}: ended by {ended.ending}, abort {'refused' if ended.refused else 'accepted'}")  # fmt: skip
        if ended.late or not ok:
            problems.append(f"{where}: {ended.text()}; {measured}")
        fail_back(n, s)
    result.bound(
        "failover killed past its commit point: resumed, never undone; writable within"
        f" {WRITABLE:g} s, the pair turned round",
        not problems,
        "; ".join(problems) or "2 kills, each resumed",
    )


def _resumed_after_a_kill_inside(n: Nemesis, result: Result, s: Split, what: str, command: list[str], step_named: str) -> None:  # fmt: skip
    """``command`` killed inside its first step whose name begins ``step_named`` (run, not
    journaled), then resumed: it finishes, nothing is left open, the shards still take
    writes."""
    plan = PLAN_STEP.findall(n.manage("shardstore", *command, "--dry-run").output)
    step, named = next(((int(k), name) for k, name in plan if name.startswith(step_named)), (0, ""))
    if not step:
        raise DrillError(f"{what}'s plan has no step {step_named!r}: {plan}")
    n.say(f"{what}: kill -9 inside step {step}")
    ended = _kill_and_end(n, s, command, step, [s.moving, s.staying], inside=True, resume=True)
    left = open_operations(n)
    result.figure(f"{what} killed inside step {step}/{ended.steps}: {ended.text()}")
    result.bound(
        f"{what} killed inside step {step} ({named}): resumed, nothing left open, writable",
        not left and not ended.late,
        f"{ended.text()}; open: {left}" if left else ended.text(),
    )


def operator_killed(n: Nemesis, result: Result) -> None:
    """e. The operator killed with ``kill -9`` after each step of planned failover, split
    and revert in turn: abort (or resume) leaves the shards writable within 5 s, the
    pair replicating; then inside a step of the cleanup and of the rebuild that follow,
    each resumed; nothing acknowledged lost."""
    s = Split(n, CAP)
    host, replica = s.host, s.replica
    result.title = f"the operator killed after each step of failover, split and revert of {host}/{replica}, inside cleanup and rebuild"  # fmt: skip
    result.figure(f"shards {s.spans[0]} move in the split, {s.spans[1]} stay on {host}")
    s.load.start()
    s.load.wait(WARM_UP)
    began = time.monotonic()
    both = [s.moving, s.staying]
    _killed_each_step(n, result, s, "failover", ["failover", host], both, {"abort": REPLICATING})
    _failover_past_its_commit(n, result, s)
    failover_done = time.monotonic()
    # A split killed after its final publish is resumed: it stands, the pair is two masters.
    split = {"abort": REPLICATING, "resume": TWO_MASTERS}
    _killed_each_step(n, result, s, "split", ["split", host], [s.moving], split, inside_commit=True)
    split_done, current = time.monotonic(), n.source.current("shards")
    if not current.reason.startswith("split "):
        raise DrillError(f"no split stands after the split's kills: map v{current.version}: {current.reason}")  # fmt: skip
    # Aborted, the revert leaves the split standing; resumed, the replica out of service.
    revert, ends = ["split", "--revert", str(current.version)], {"abort": TWO_MASTERS, "resume": None}  # fmt: skip
    _killed_each_step(n, result, s, f"revert of split {current.version}", revert, [s.moving], ends, inside_commit=True)  # fmt: skip
    revert_done = time.monotonic()
    _resumed_after_a_kill_inside(n, result, s, f"cleanup of split {current.version}", ["cleanup", str(current.version), "--without-backup"], f"drop the copies split {current.version} left on {host}")  # fmt: skip
    _resumed_after_a_kill_inside(n, result, s, f"rebuild of {replica}", ["rebuild", replica], "copy ")  # fmt: skip
    ok, measured = pair_state(n, host, replica, replicating=True)
    result.bound(f"{replica} rebuilt: it replicates from {host} again", ok, measured)
    result.figure(f"time: failover {failover_done - began:.0f} s, split {split_done - failover_done:.0f} s, revert {revert_done - split_done:.0f} s, cleanup and rebuild {time.monotonic() - revert_done:.0f} s")  # fmt: skip
    s.load.wait(SETTLE)
    n.finish(result, s.load)
