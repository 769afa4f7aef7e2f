"""The operator's own process paused (h) or without its journal (i); the pair the
operator's cases work on (``Split``, which e and f share too), and what they ask of it.

h. The operator paused past its session and resumed under a newer operation (terms).

i. The control database locked while a planned failover runs.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

from shardstore import shard_of
from shardstore.control.locks import HostsBusy, locks_for
from shardstore.control.mysql_hosts import HostError, endpoint
from shardstore.control.split import halves, shards_in, spans
from toolkit.drills.base import SETTLE, WARM_UP, DrillError, Result, healthy_pair
from toolkit.load.pinners import Pinner, ensure_pinners
from toolkit.load.traffic import Load

from .base import Nemesis, Paused, writable_within

LEFT_OPEN_WITHIN = 30.0  # a killed run's ZooKeeper session, and its locks, expire by then
PLAN_STEP = re.compile(r"^(\d+)\. (.*)$", re.MULTILINE)


class Split:
    """The pair a case works on, its shards cut as ``split`` cuts them, and a load whose
    pinners are grouped: the shards that move, those that stay, the other master's."""

    def __init__(self, n: Nemesis, cap: float) -> None:
        self.topology = topology = n.topology()
        self.host, self.replica = healthy_pair(n, topology)
        staying, moving = halves([r.as_json() for r in topology.ranges if r.master == self.host])
        self.movers = set(shards_in(moving))
        self.spans = spans(moving), spans(staying)
        self.moving, self.staying = f"{self.host} (moving)", f"{self.host} (staying)"
        others = sorted({r.master for r in topology.ranges} - {self.host})
        groups = [self.moving, self.staying, *others]
        pinners = ensure_pinners(n.site, n.dir / "pinners.json", topology, per_group=3, group=self.group, groups=groups)  # fmt: skip
        # Two writers a group, not the drills' three: the operator's commands, whose start-up
        # the bounds count, share the machine's two cores with the load and the site.
        self.load = n.track(Load(n.site, pinners, topology, group=self.group, writers_per_group=2, pause=0.05, max_seconds=cap))  # fmt: skip

    def group(self, pinner: Pinner) -> str:
        shard = shard_of(pinner.user_id)
        if shard in self.movers:
            return self.moving
        master = self.topology.master_of(shard)
        return self.staying if master == self.host else master


def open_operations(n: Nemesis) -> list[dict[str, Any]]:
    ran = n.manage("shardstore", "operations", "--json")
    if ran.returncode != 0:
        raise DrillError(f"shardstore operations: exit {ran.returncode}: {ran.tail(3)}")
    return list(json.loads(ran.output[ran.output.index("[") :]))


def left_open(n: Nemesis, what: str) -> dict[str, Any]:
    """The one open operation (``operations``), once its killed process's ZooKeeper session
    has expired and its locks with it (polled as ``operations`` does, by taking them, but
    in this process: a ``manage.py`` per poll would load the machine being measured)."""
    rows = open_operations(n)
    if len(rows) != 1:
        raise DrillError(f"{what}: expected one open operation, found {rows}")
    locks, deadline = locks_for(n.source), time.monotonic() + LEFT_OPEN_WITHIN
    while True:
        try:
            with locks.hold(rows[0]["locks"], owner="the nemesis: is the killed run's session gone?"):  # fmt: skip
                return rows[0]
        except HostsBusy:
            if time.monotonic() > deadline:
                raise DrillError(f"{what}: its locks still held after {LEFT_OPEN_WITHIN:g} s") from None  # fmt: skip
            time.sleep(0.2)


def pair_state(n: Nemesis, host: str, replica: str, *, replicating: bool) -> tuple[bool, str]:
    """With ``replicating``: ``replica`` replicates from ``host`` without error, read-only,
    and ``host`` is writable (waiting up to 10 s for the threads); else both are writable
    and replicate from no one (a split stands)."""
    topology = n.topology()
    source = "{}:{}".format(*endpoint(topology.hosts[host]))
    deadline, measured = time.monotonic() + 10, ""
    while True:
        try:
            with n.admin(topology, host) as m, n.admin(topology, replica) as r:
                status, host_ro, replica_ro = r.replica_status(), m.read_only(), r.read_only()
        except HostError as error:
            ok, measured = False, str(error)
        else:
            health = "" if status is None else f" ({'healthy' if status.healthy else status.last_error or 'stopped'})"  # fmt: skip
            follows = "no one" if status is None else host if status.source == source else status.source  # fmt: skip
            measured = f"{replica} replicates from {follows}{health}, read_only {host}={int(host_ro)} {replica}={int(replica_ro)}"  # fmt: skip
            healthy = bool(status and status.healthy and follows == host)
            ok = (healthy and replica_ro if replicating else status is None and not replica_ro) and not host_ro  # fmt: skip
        if ok or time.monotonic() > deadline:
            return ok, measured
        time.sleep(0.25)


def fail_back(n: Nemesis, s: Split) -> None:
    """If the pair's replica masters its shards (a failover stood), a planned failover back."""
    if n.topology().master_of(min(s.movers)) != s.replica:
        return
    back = n.manage("shardstore", "failover", s.replica)
    if back.returncode != 0:
        raise DrillError(f"failover back to {s.host}: exit {back.returncode}: {back.tail(5)}")


# -- h ----------------------------------------------------------------------------------


def _writable(n: Nemesis, hosts: tuple[str, ...]) -> list[str]:
    topology = n.topology()
    writable = []
    for host in hosts:
        with n.admin(topology, host) as server:
            if not server.read_only():
                writable.append(host)
    return writable


def operator_paused(n: Nemesis, result: Result) -> None:
    """h. The operator paused (SIGSTOP) right after a planned failover froze the master, past
    its ZooKeeper session; another operator aborts that run and fails the master over; the
    paused one, resumed, fails its next step and its undo (the thaw) is refused on a server
    the newer run claimed: never two writable masters."""
    s = Split(n, 600.0)
    host, replica = s.host, s.replica
    result.title = f"an operator paused past its session while failing {host} over, resumed under a newer failover"  # fmt: skip
    plan = PLAN_STEP.findall(n.manage("shardstore", "failover", host, "--dry-run").output)
    freeze = next((int(k) for k, name in plan if name.startswith("set read_only")), 0)
    if not freeze:
        raise DrillError(f"the failover's plan has no freeze: {plan}")
    s.load.start()
    s.load.wait(WARM_UP)
    paused = Paused(n, freeze, "shardstore", "failover", host)
    try:
        if not paused.wait():
            raise DrillError(f"the failover did not stop after step {freeze}")
        operation = left_open(n, f"the failover paused after step {freeze}")
        n.say(f"paused after step {freeze}, its session gone; abort {operation['id']}, then failover {host}")  # fmt: skip
        for command in (("abort", str(operation["id"])), ("failover", host)):
            ran = n.manage("shardstore", *command)
            if ran.returncode != 0:
                raise DrillError(f"{' '.join(command)}: exit {ran.returncode}: {ran.tail(5)}")
    finally:
        resumed = paused.finish()
    said = [line for line in resumed.output.splitlines() if "taken over by a newer operation" in line]  # fmt: skip
    result.bound("the paused failover, resumed, fails and its undo is refused", resumed.returncode != 0 and bool(said), said[-1] if said else resumed.tail(2))  # fmt: skip
    writable = _writable(n, (host, replica))
    result.bound("one writable master", writable == [replica], f"writable: {', '.join(writable) or 'none'}")  # fmt: skip
    ok, measured = pair_state(n, replica, host, replicating=True)
    result.bound(f"{host} follows {replica}", ok, measured)
    fail_back(n, s)
    s.load.wait(SETTLE)
    n.finish(result, s.load)


# -- i ----------------------------------------------------------------------------------

#: How long the control database is held locked under the running failover.
LOCKED = 15.0


def control_database_away(n: Nemesis, result: Result) -> None:
    """i. The control database locked (an exclusive SQLite transaction held 15 s) while a
    planned failover runs, just after its freeze: the step whose record cannot be written
    is undone with those before it, the master is writable again within the journal's
    timeouts, the run is left open, and ``abort`` ends it once the database is back."""
    s = Split(n, 600.0)
    host, replica = s.host, s.replica
    result.title = f"the control database locked while failing {host} over, after its freeze"
    plan = PLAN_STEP.findall(n.manage("shardstore", "failover", host, "--dry-run").output)
    freeze = next((int(k) for k, name in plan if name.startswith("set read_only")), 0)
    s.load.start()
    s.load.wait(WARM_UP)
    paused = Paused(n, freeze, "shardstore", "failover", host)
    database = sqlite3.connect(Path(n.env["PINBOARD_VAR_DIR"]) / "control.sqlite3", timeout=30)
    try:
        if not paused.wait():
            raise DrillError(f"the failover did not stop after step {freeze}")
        database.execute("BEGIN EXCLUSIVE")
        began = time.monotonic()
        n.say(f"control database locked for {LOCKED:g} s; the failover goes on")
        ran = paused.finish()
        writable = writable_within(s.load, s.moving, began, LOCKED)
        time.sleep(max(0.0, LOCKED - (time.monotonic() - began)))
    finally:
        database.rollback()
        database.close()
        if paused.process.poll() is None:
            paused.finish()
    took = "no write" if writable is None else f"{writable:.2f} s"
    result.figure(f"failover: exit {ran.returncode}; {host}'s shards writable {took} after the lock was taken")  # fmt: skip
    result.bound("the failover stops and undoes", ran.returncode != 0, ran.tail(1))
    result.bound(f"{host}'s shards writable while the database is away", writable is not None, took)  # fmt: skip
    operation = left_open(n, "the failover whose journal was away")
    aborted = n.manage("shardstore", "abort", str(operation["id"]))
    result.bound(f"abort {operation['id']} ends it once the database is back", aborted.returncode == 0, aborted.tail(1))  # fmt: skip
    ok, measured = pair_state(n, host, replica, replicating=True)
    result.bound("the pair replicates as before", ok and not open_operations(n), measured)
    s.load.wait(SETTLE)
    n.finish(result, s.load)
