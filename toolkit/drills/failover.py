"""Failover drills: a master handed over as planned, and a master killed (``kill -9``) and
replaced in an emergency, both under load.

Each picks its master from the shard map in force (the first master, by name, whose
ranges have a replica in service), so the drills run in any order and again: a planned
failover leaves the old master as the new one's replica, ready to fail back. An
emergency failover leaves the old master out of service, read-only, replicating from no
one, until the rebuild drill (rebuild.py) makes it its new master's replica again.
"""

from __future__ import annotations

import time

from shardstore import ShardReadOnly, ShardStoreError, Topology
from shardstore.control.mysql_hosts import HostError, endpoint
from toolkit.load.report import LoadReport
from toolkit.load.traffic import Load

from .base import (
    SETTLE,
    WARM_UP,
    DrillError,
    Drills,
    Ran,
    Result,
    healthy_pair,
    shards_of,
    wait_lost,
)

#: The bounds of issue 10: the affected shards take writes again within these many seconds.
PLANNED_WINDOW = 3.0
EMERGENCY_WINDOW = 15.0


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
    d.say(f"manage.py shardstore failover {master}")
    ran = d.manage("shardstore", "failover", master)
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
        bool(handed) and all(r.master == replica and r.replica == master for r in handed),
        ", ".join(f"{r.first}..{r.last}: {r.master}/{r.replica}" for r in handed),
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
    """``kill -9`` a master, then ``shardstore failover MASTER --emergency``, under load:
    nothing acknowledged lost, writable again within 15 s, the old master fenced when it
    comes back."""
    topology = d.topology()
    master, replica = healthy_pair(d, topology, prefer_last=True)
    process = d.process(master)
    result.title = f"emergency failover of {master} (kill -9) to {replica} under load"
    result.figure(f"shards {shards_of(topology, master)}: {master} -> {replica}")

    load = d.load(topology)
    if master not in load.groups:
        raise DrillError(f"the load has no pinner on {master}")
    load.wait(WARM_UP)
    d.say(f"kill -9 {master} (pid {process.pid}); manage.py shardstore failover {master} --emergency")  # fmt: skip
    killed = time.monotonic()
    process.halt(kill=True)
    d.say(f"{replica}: {wait_lost(d, topology, replica)}")
    ran = d.manage("shardstore", "failover", master, "--emergency")
    result.figure(
        f"failover command: exit {ran.returncode} in {ran.seconds:.1f} s"
        f" (done {time.monotonic() - killed:.1f} s after the kill)"
    )
    settle(load, master, killed + ran.seconds, EMERGENCY_WINDOW)
    report = d.finish(result, load)

    bound_failover(result, ran, report, master, EMERGENCY_WINDOW)
    result.bound(
        f"shards of {master} take writes after the failover",
        load.acked_since(killed + ran.seconds, master) > 0,
        f"{load.acked_since(killed + ran.seconds, master)} acknowledged",
    )

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
