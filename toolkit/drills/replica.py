"""The replica drills, under load:

- ``replica``: one of a master's two replicas killed (``kill -9``), two guards running.
  The other replica acknowledges the master's commits, so its shards keep taking writes;
  the other master's writes and every read go on as before. With no command typed, the
  guard replaces the dead replica by the map's spare (a copy of the master), and the
  range is whole again. The dead one is then started again, wiped of its replication and
  put back in service: the cluster's spare for the next run. Its target is the last
  replica in service of the first master with two (the planned drill fails over to the
  first).
- ``strict``: both replicas of the last master with two killed, its range ``strict``. No
  server acknowledges its commits, so its shards take no write, and each write is refused
  within the site's read timeout (the first ones wait it out; then the host's writes are
  refused at once: ``shardstore/backends/acknowledgements.py``); the other master's writes
  and every read, the dead range's included, go on. Both started again, the range takes
  writes again.
- ``degrade``: the same under ``degrade-after 2``: the range stops taking writes for at
  most the policy's wait, then its master commits alone (reported degraded); both
  replicas back, its commits wait for them again; the range set back to ``strict``.

Each restores what it broke, so they run in any order and again.
"""

from __future__ import annotations

import time

from shardstore.backends.mysql import READ_TIMEOUT
from shardstore.control import guard
from shardstore.control.mysql_hosts import HostError
from shardstore.control.replacement import spares
from shardstore.topology import Topology

from .base import SETTLE, WARM_UP, DrillError, Drills, Result, shards_of

#: The bounds: the master's shards never wait longer than this for an acknowledgement,
#: and reads slow down by at most this factor.
GAP = 5.0
SLOWER = 3.0
#: How long the load runs with the replica dead before the reads' p99 is taken.
DEAD = 10.0
#: The guards' wait before replacing a dead replica, and the bound on the replacement
#: (from the kill to the spare in the map, acknowledging).
REPLACE_AFTER = 5.0
REPLACED_WITHIN = 240.0


#: Seconds both replicas stay dead, and the bound on taking writes again once they are back.
BOTH_DEAD = 15.0
BACK = 30.0


def _with_two(topology: Topology, *, last: bool = False) -> tuple[str, list[str], list[str]]:
    """A master with two replicas in service (the first by name, or the last), those
    replicas, and the other masters."""
    out = set(topology.out_of_service)
    served = {r.master: [n for n in r.replicas if n not in out] for r in topology.ranges}
    masters = [m for m, names in sorted(served.items()) if len(names) >= 2]
    if not masters:
        raise DrillError("no master has two replicas in service (start a fresh cluster)")
    master = masters[-1] if last else masters[0]
    return master, served[master], sorted(set(served) - {master})


def replica_killed(d: Drills, result: Result) -> None:
    """``kill -9`` a replica under load, two guards running: nothing lost, its master's
    shards acknowledged throughout (the longest gap at most 5 s), the other master's writes
    and every read undisturbed (no error, p99 at most 3x); with no command typed, the
    spare in its place and the range whole again; the dead one back as the spare."""
    topology = d.topology()
    master, replicas, others = _with_two(topology)
    replica = replicas[-1]
    spare = next(iter(spares(d.source.current("shards").document)), None)
    if spare is None:
        raise DrillError("the shard map has no spare host (start a fresh cluster)")
    result.title = f"a replica of {master} killed (kill -9) under load, replaced by the guard"
    result.figure(f"shards {shards_of(topology, master)}: {master} -> {', '.join(replicas)}; {replica} killed, {spare} the spare")  # fmt: skip

    d.source.record(guard.KIND, "recoveries", {})  # an earlier run's cool-down is not this one's
    load = d.load(topology)
    options = ("--interval", "0.5", "--replace-after", str(REPLACE_AFTER))
    with d.guards(2, *options):
        load.wait(WARM_UP)
        killed = time.monotonic()
        before = load.read_p99(load.started, killed)
        d.cluster[replica].halt(kill=True)
        d.say(f"{replica} killed")
        load.wait(DEAD)
        after = load.read_p99(killed, time.monotonic())
        acked = load.acked_since(killed, master)
        waiting = _in_place_of(d, master, spare, killed + REPLACED_WITHIN)
        took = time.monotonic() - killed
        d.say(f"{spare} in {replica}'s place after {took:.1f} s" if waiting is None else f"not replaced: {waiting}")  # fmt: skip
    report = d.finish(result, load)

    gap = report.groups[master].longest_gap
    result.bound(f"shards of {master}: longest gap at most {GAP:g} s", gap <= GAP, f"{gap:.2f} s")
    result.bound(f"shards of {master} acknowledged with {replica} dead", acked > 0, f"{acked} writes")  # fmt: skip
    errors = report.errors(master, *others)
    result.bound("errors on any shard, writes and reads", errors == 0, errors)
    result.bound(
        f"reads' p99 at most {SLOWER:g}x what it was",
        after <= SLOWER * max(before, 0.01),
        f"{before * 1000:.0f} ms before, {after * 1000:.0f} ms with {replica} dead",
    )
    result.bound(f"{spare} replaces {replica} with no command typed, within {REPLACED_WITHIN:g} s", waiting is None, f"{took:.1f} s after the kill (the guard waits {REPLACE_AFTER:g} s)" if waiting is None else waiting)  # fmt: skip
    pairs = d.manage("shardstore", "pairs")
    result.bound(f"{master}'s range whole again (shardstore pairs)", pairs.returncode == 0, f"exit {pairs.returncode}")  # fmt: skip

    # Repaired, the dead one is the next spare: no replication of its own, back in service.
    d.cluster[replica].restart()
    with d.admin(d.topology(), replica) as dead:
        dead.stop_replicating()
    back = d.manage("shardstore", "host-service", replica, "--in")
    result.bound(f"{replica} back in service as the spare", back.returncode == 0, f"exit {back.returncode}")  # fmt: skip


def _in_place_of(d: Drills, master: str, spare: str, deadline: float) -> str | None:
    """None once the map names ``spare`` a replica of ``master``, in service, and it
    replicates from it, acknowledging; else what it is doing at ``deadline``."""
    state = "not in the map"
    while time.monotonic() < deadline:
        topology = d.topology()
        named = any(r.master == master and spare in r.replicas for r in topology.ranges)
        if named and spare not in topology.out_of_service:
            state = _acknowledges(d, spare, 2.0) or ""
            if not state:
                return None
        time.sleep(0.5)
    return state


def both_replicas_killed(d: Drills, result: Result) -> None:
    """``kill -9`` both replicas of a ``strict`` range under load: its shards take no write,
    each refused within the read timeout and soon at once; the other master's writes and
    every read undisturbed; nothing lost; both started again, the range writable again."""
    topology = d.topology()
    master, replicas, others = _with_two(topology, last=True)
    policy = next(r.durability for r in topology.ranges if r.master == master)
    if not policy.strict:
        raise DrillError(f"{master}'s range is {policy}, not strict")
    result.title = f"both replicas of {master} killed (kill -9) under load, its range strict"
    result.figure(f"shards {shards_of(topology, master)}: {master} -> {', '.join(replicas)}, both killed")  # fmt: skip

    load = d.load(topology)
    load.wait(WARM_UP)
    killed = time.monotonic()
    for replica in replicas:
        d.cluster[replica].halt(kill=True)
    d.say(f"{', '.join(replicas)} killed")
    load.wait(BOTH_DEAD)
    back = time.monotonic()
    d.restore()  # both started again, their replication resumed
    d.say(f"{', '.join(replicas)} started again")
    deadline = time.monotonic() + BACK
    while load.acked_since(back, master) == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    again = time.monotonic() - back
    load.wait(SETTLE)
    writes = load.writes_between(master, killed, back)  # those in flight at the kill too
    acked = sum(1 for a in load.acks_after(killed + 1) if a.group == master and a.at < back)
    report = d.finish(result, load)

    longest = max((seconds for seconds, _ in writes), default=0.0)
    quick = sum(1 for seconds, status in writes if status == 503 and seconds < 1.5)
    result.figure(f"{master}'s writes with no replica: {len(writes)}, {quick} refused within 1.5 s, the longest {longest:.1f} s")  # fmt: skip
    result.bound(f"writes acknowledged on {master}'s shards with no replica", acked == 0, acked)
    bound = READ_TIMEOUT + 2
    result.bound(f"no write on {master}'s shards held past {bound:g} s", longest <= bound, f"{longest:.1f} s")  # fmt: skip
    result.bound(f"{master}'s writes refused at once once the first waited", quick > 0, f"{quick} of {len(writes)}")  # fmt: skip
    errors = report.errors(*others)
    result.bound(f"errors on the other master's shards ({', '.join(others)})", errors == 0, errors)
    tally = report.groups[master].tally
    result.bound(f"reads of {master}'s shards refused or failed", tally.reads_refused + tally.reads_failed == 0, f"{tally.reads} ok, {tally.reads_refused} refused, {tally.reads_failed} failed")  # fmt: skip
    result.bound(f"{master}'s shards take writes again within {BACK:g} s of the replicas' restart", again < BACK, f"{again:.1f} s")  # fmt: skip


#: The degrading policy the drill sets, and the bound on the range's gap under it.
DEGRADE_AFTER = 2
DEGRADED_GAP = DEGRADE_AFTER + 2.0


def degraded(d: Drills, result: Result) -> None:
    """``kill -9`` both replicas of a ``degrade-after 2`` range under load: its shards wait
    at most the policy's 2 s, then take writes again, its master committing alone (and
    saying so); nothing lost; both replicas back, its commits wait for them again."""
    topology = d.topology()
    master, replicas, others = _with_two(topology, last=True)
    first, last = next((r.first, r.last) for r in topology.ranges if r.master == master)
    span = f"{first}-{last}"
    result.title = f"both replicas of {master} killed (kill -9) under load, its range degrade-after {DEGRADE_AFTER}"  # fmt: skip
    set_policy = d.manage("shardstore", "durability", span, "degrade-after", str(DEGRADE_AFTER))
    if not result.bound(f"durability {span} degrade-after {DEGRADE_AFTER}", set_policy.returncode == 0, f"exit {set_policy.returncode}"):  # fmt: skip
        result.figures += [f"| {line}" for line in set_policy.tail().splitlines()]
        return
    try:
        load = d.load(d.topology())
        load.wait(WARM_UP)
        for replica in replicas:
            d.cluster[replica].halt(kill=True)
        d.say(f"{', '.join(replicas)} killed")
        load.wait(BOTH_DEAD / 2)
        with d.admin(d.topology(), master) as m:
            alone = m.semi_sync().degraded
        d.restore()
        d.say(f"{', '.join(replicas)} started again")
        waiting = _waits_again(d, master, BACK)
        load.wait(SETTLE)
        report = d.finish(result, load)
    finally:
        back = d.manage("shardstore", "durability", span, "strict")
        result.bound(f"durability {span} strict again", back.returncode == 0, f"exit {back.returncode}")  # fmt: skip
    gap = report.groups[master].longest_gap
    result.bound(f"shards of {master}: longest gap at most {DEGRADED_GAP:g} s", gap <= DEGRADED_GAP, f"{gap:.2f} s")  # fmt: skip
    result.bound(f"{master} committed alone with no replica (degraded)", alone, "degraded" if alone else "not degraded")  # fmt: skip
    result.bound(f"errors on the other master's shards ({', '.join(others)})", report.errors(*others) == 0, report.errors(*others))  # fmt: skip
    result.bound(f"{master}'s commits wait for a replica again once both are back", waiting is None, waiting or "yes")  # fmt: skip


def _waits_again(d: Drills, master: str, timeout: float) -> str | None:
    """None once ``master``'s commits wait for a replica's acknowledgement again (a replica
    caught up: MariaDB leaves the degraded state by itself), else its state."""
    deadline, state = time.monotonic() + timeout, "not asked"
    while time.monotonic() < deadline:
        try:
            with d.admin(d.topology(), master) as m:
                semi = m.semi_sync()
            if semi.kept and not semi.degraded:
                return None
            state = f"{semi.replicas} acknowledging, degraded: {semi.degraded}"
        except HostError as error:
            state = str(error)
        time.sleep(0.5)
    return state


def _acknowledges(d: Drills, replica: str, timeout: float) -> str | None:
    """None once ``replica`` replicates healthily and acknowledges, else what it is doing."""
    deadline, state = time.monotonic() + timeout, "not asked"
    while time.monotonic() < deadline:
        try:
            with d.admin(d.topology(), replica) as r:
                status = r.replica_status()
                if status is not None and status.healthy and r.acknowledges():
                    return None
                state = f"{status.io_state if status else 'no replication'}, acknowledges: {r.acknowledges()}"  # fmt: skip
        except HostError as error:
            state = str(error)
        time.sleep(0.5)
    return state
