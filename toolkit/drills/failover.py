"""Failover drills: a master handed over as planned, and a master killed (``kill -9``) and
replaced in an emergency by the guard (``shardstore guard``), with no command typed, both
under load.

Each picks its master from the shard map in force (the first master, by name, whose
ranges have a replica in service), so the drills run in any order and again: a planned
failover leaves the old master as the new one's replica, ready to fail back. An
emergency failover leaves the old master out of service, read-only, replicating from no
one, until the rebuild drill (rebuild.py) makes it its new master's replica again.
"""

from __future__ import annotations

import subprocess
import time

from shardstore import ShardReadOnly, ShardStoreError, Topology
from shardstore.control import guard
from shardstore.control.mysql_hosts import HostError, endpoint
from shardstore.control.signals import STOP_AFTER_STEP
from toolkit.load.report import LoadReport
from toolkit.load.traffic import Load
from toolkit.processes import stopped

from .base import (
    SETTLE,
    WARM_UP,
    DrillError,
    Drills,
    Ran,
    Result,
    healthy_pair,
    shards_of,
)

#: The bounds: the affected shards take writes again within these many seconds.
PLANNED_WINDOW = 3.0
GUARD_WINDOW = 30.0
#: Seconds the guard waits for a silent master to answer before it looks at its replicas.
GUARD_CONFIRM = 3.0
#: The emergency failover's step that promotes the replica (emergency.py: confirm, fence,
#: apply what was received, stop replication, promote, publish): the active guard is
#: killed after it, with the map still naming the dead master.
PROMOTED = 5


def _failed_over(d: Drills, master: str, since: float, bound: float) -> float | None:
    """Seconds from ``since`` until the map in force names ``master`` master of nothing
    (at most ``bound``), or None."""
    while time.monotonic() - since < bound:
        if all(r.master != master for r in d.topology().ranges):
            return time.monotonic() - since
        time.sleep(0.2)
    return None


def settle(load: Load, master: str, since: float, bound: float) -> None:
    """Keep the load on until the moved shards have taken a write again (writers refused
    meanwhile wait out their Retry-After: up to 5 s), at most ``bound`` s, then SETTLE more:
    a load that ended first could not show that they did."""
    deadline = time.monotonic() + bound
    while load.acked_since(since, master) == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    load.wait(SETTLE)


def bound_failover(
    result: Result, ran: Ran, report: LoadReport, master: str, window: float
) -> None:
    """The bounds both failovers check: the command succeeded (else the tail of its output
    joins the figures), and the moved shards took writes again within ``window`` s."""
    ok = result.bound("failover command succeeded", ran.returncode == 0, f"exit {ran.returncode}")
    if not ok:
        result.figures += [f"| {line}" for line in ran.tail().splitlines()]
    moved = report.groups[master]
    result.bound(
        f"shards of {master} writable again within {window:g} s",
        moved.longest_gap <= window,
        f"longest gap {moved.longest_gap:.2f} s",
    )


def planned(d: Drills, result: Result) -> None:
    """``shardstore failover MASTER`` under load: nothing lost, the other master's shards
    untouched, the moved shards writable again within 3 s, the old master a replica."""
    topology = d.topology()
    master, replica = healthy_pair(d, topology)
    others = sorted({r.master for r in topology.ranges} - {master})
    result.title = f"planned failover of {master} to {replica} under load"
    result.figure(f"shards {shards_of(topology, master)}: {master} -> {replica}")

    load = d.load(topology)
    if master not in load.groups:
        raise DrillError(f"the load has no pinner on {master}")
    load.wait(WARM_UP)
    d.say(f"manage.py shardstore failover {master} --to {replica}")
    ran = d.manage("shardstore", "failover", master, "--to", replica)
    switched = time.monotonic()
    result.figure(f"failover command: exit {ran.returncode} in {ran.seconds:.1f} s")
    settle(load, master, switched, PLANNED_WINDOW)
    report = d.finish(result, load)

    bound_failover(result, ran, report, master, PLANNED_WINDOW)
    result.bound(
        f"shards of {master} take writes after the switch",
        load.acked_since(switched, master) > 0,
        f"{load.acked_since(switched, master)} acknowledged",
    )
    other_errors = report.errors(*others)
    result.bound(
        f"errors on the other master's shards ({', '.join(others)})",
        other_errors == 0,
        other_errors,
    )

    after = d.topology()
    handed = [r for r in after.ranges if r.first in {x.first for x in topology.ranges if x.master == master}]  # fmt: skip
    result.bound(
        f"map v{after.version} names {replica} master, {master} its replica",
        bool(handed) and all(r.master == replica and master in r.replicas for r in handed),
        ", ".join(f"{r.first}..{r.last}: {r.master}/{','.join(r.replicas)}" for r in handed),
    )
    try:
        with d.admin(after, master) as m:
            status, read_only = m.replica_status(), m.read_only()
        source = "{}:{}".format(*endpoint(after.hosts[replica]))
        replicating = status is not None and status.healthy and status.source == source
        measured = f"read_only={int(read_only)}, replicating from {status.source if status else 'no one'}"  # fmt: skip
    except HostError as error:
        replicating, read_only, measured = False, False, str(error)
    result.bound(f"{master} is {replica}'s read-only replica", replicating and read_only, measured)


def emergency(d: Drills, result: Result) -> None:
    """``kill -9`` a master under load with two guards running (``shardstore guard``) and
    no command typed: the active guard begins the failover and is killed once it has
    promoted the replica, the other finishes it, nothing acknowledged is lost, the shards
    are writable again within 30 s, the old master fenced when it comes back."""
    topology = d.topology()
    master, replica = healthy_pair(d, topology, prefer_last=True)
    process = d.process(master)
    result.title = f"a master killed (kill -9), failed over to {replica} by the guards under load, the active one killed mid-failover"  # fmt: skip
    result.figure(f"shards {shards_of(topology, master)}: {master} -> {replica}")

    load = d.load(topology)
    if master not in load.groups:
        raise DrillError(f"the load has no pinner on {master}")
    # The guard's records start afresh: a recovery in an earlier run would put the range in
    # its cool-down, and its decisions would be taken for this run's.
    d.source.record(guard.KIND, "recoveries", {})
    d.source.record(guard.KIND, "decisions", {"decisions": []})
    # Whichever guard is active stops itself once it has promoted the replica, before it
    # publishes the map: the drill kills it there, and the other must finish the failover.
    stop = {STOP_AFTER_STEP: str(PROMOTED)}
    # The range the failover leaves a replica short is the rebuild drill's to make whole
    # (the old master rebuilt): these guards add no spare to it (--replicas 0).
    options = ("--interval", "0.5", "--confirm", str(GUARD_CONFIRM), "--replicas", "0")
    with d.guards(2, *options, env=stop) as guards:
        load.wait(WARM_UP)
        d.say(f"kill -9 {master} (pid {process.pid}); no command typed")
        killed = time.monotonic()
        process.halt(kill=True)
        result.figure(_kill_the_active_guard(d, guards, killed))
        taken = _failed_over(d, master, killed, GUARD_WINDOW)
        result.figure(f"the other guard's failover in force {taken:.1f} s after the kill" if taken else "no failover by the guards")  # fmt: skip
        settle(load, master, killed, GUARD_WINDOW)
        report = d.finish(result, load)
        status = d.manage("shardstore", "guard", "status")
        decided = next((x for x in status.output.splitlines() if f"resumed {master}:" in x), "")
        result.figures.append(f"| {decided or status.tail(1)}")
        result.bound(*_second_death(d, replica))
    moved = report.groups[master]
    result.bound(
        f"shards of {master} writable again within {GUARD_WINDOW:g} s, no command typed",
        taken is not None and moved.longest_gap <= GUARD_WINDOW,
        f"longest gap {moved.longest_gap:.2f} s",
    )
    result.bound(
        f"shards of {master} take writes after the failover",
        load.acked_since(killed, master) > 0,
        f"{load.acked_since(killed, master)} acknowledged",
    )
    result.bound("the other guard's decision: resumed the failover left open", bool(decided), decided or status.tail(1))  # fmt: skip

    after = d.topology()
    result.bound(
        f"map v{after.version} names {master} master of nothing, out of service",
        all(r.master != master for r in after.ranges) and master in after.out_of_service,
        f"out of service: {', '.join(after.out_of_service) or 'none'}",
    )
    d.say(f"restart {master}")
    process.restart()
    try:
        with d.admin(after, master) as m:
            read_only = m.read_only()
        result.bound(f"{master} restarted read_only", read_only, f"read_only={int(read_only)}")
    except HostError as error:
        result.bound(f"{master} restarted read_only", False, error)
    result.bound(*_old_map_write(d, topology, master))
    result.notes.append(
        f"{master} runs again, read-only and out of service, until the rebuild drill makes"
        f" it {replica}'s replica again"
    )


def _kill_the_active_guard(d: Drills, guards: list[subprocess.Popen[bytes]], killed: float) -> str:  # fmt: skip
    """Wait for the active guard to stop itself after the promotion, then ``kill -9`` it."""
    deadline = killed + GUARD_WINDOW
    while time.monotonic() < deadline:
        active = next((g for g in guards if stopped(g.pid)), None)
        if active is not None:
            active.kill()
            d.say(f"kill -9 the active guard (pid {active.pid}) after its step {PROMOTED}")
            return f"the active guard killed {time.monotonic() - killed:.1f} s after the master, once it had promoted the replica"  # fmt: skip
        time.sleep(0.1)
    raise DrillError(
        f"no guard stopped after step {PROMOTED} within {GUARD_WINDOW:g} s of the kill"
    )


def _second_death(d: Drills, master: str) -> tuple[str, bool, str]:
    """``kill -9`` the new ``master`` within the guard's cool-down: the guard must leave it
    to a person (the map unchanged), and say so. Then do as that person: restart it and
    ``reopen`` it (it comes back read-only)."""
    process = d.process(master)
    d.say(f"kill -9 {master} (pid {process.pid}), within the cool-down")
    process.halt(kill=True)
    deadline, said = time.monotonic() + GUARD_WINDOW, ""
    while time.monotonic() < deadline and f"cooling-down {master}:" not in said:
        time.sleep(1)
        said = d.manage("shardstore", "guard", "status").output
    line = next((x for x in said.splitlines() if f"cooling-down {master}:" in x), said[-200:])
    kept = master in {r.master for r in d.topology().ranges}
    d.say(f"restart {master}; manage.py shardstore reopen {master}")
    process.restart()
    reopened = d.manage("shardstore", "reopen", master)
    what = f"a second death within the cool-down waits for a person ({master} then reopened: exit {reopened.returncode})"  # fmt: skip
    return what, f"cooling-down {master}:" in said and kept and reopened.returncode == 0, line.strip()  # fmt: skip


def _old_map_write(d: Drills, old: Topology, master: str) -> tuple[str, bool, str]:
    """A write through a store still on the map before the failover, to one of the old
    master's shards: it must be refused (ShardReadOnly), and nothing written."""
    shard = next(r.first for r in old.ranges if r.master == master)
    what = f"a write on the old map (shard {shard} on {master}) refused with ShardReadOnly"
    with d.store(old) as store:
        try:
            written = store.objects("comment").create(shard, {"text": "fenced?"})
        except ShardReadOnly as refused:
            return what, True, f"refused: {refused.reason}"
        except ShardStoreError as error:
            return what, False, f"{type(error).__name__}: {error}"
    return what, False, f"written as {written}: the old master took a write"
