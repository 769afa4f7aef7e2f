"""The replica drill: one of a master's two replicas killed (``kill -9``) under load. The
other replica acknowledges the master's commits, so its shards keep taking writes; the
other master's writes and every read go on as before. The killed replica is then started
again and follows its master, acknowledging again.

Its target is the last replica in service of the first master with two (the planned drill
fails over to the first), so it runs in any order and again.
"""

from __future__ import annotations

import time

from shardstore.control.mysql_hosts import HostError

from .base import SETTLE, WARM_UP, DrillError, Drills, Result, shards_of

#: The bounds: the master's shards never wait longer than this for an acknowledgement,
#: and reads slow down by at most this factor.
GAP = 5.0
SLOWER = 3.0
#: How long the load runs with the replica dead.
DEAD = 10.0


def replica_killed(d: Drills, result: Result) -> None:
    """``kill -9`` a replica under load: nothing lost, its master's shards acknowledged
    throughout (the longest gap at most 5 s), the other master's writes and every read
    undisturbed (no error, p99 at most 3x), then the replica started again and following."""
    topology = d.topology()
    out = set(topology.out_of_service)
    served = {r.master: [n for n in r.replicas if n not in out] for r in topology.ranges}
    master = next((m for m, names in sorted(served.items()) if len(names) >= 2), None)
    if master is None:
        raise DrillError("no master has two replicas in service (start a fresh cluster)")
    replica = served[master][-1]
    others = sorted(set(served) - {master})
    result.title = f"a replica of {master} killed (kill -9) under load"
    result.figure(f"shards {shards_of(topology, master)}: {master} -> {', '.join(served[master])}; {replica} killed")  # fmt: skip

    load = d.load(topology)
    load.wait(WARM_UP)
    killed = time.monotonic()
    before = load.read_p99(load.started, killed)
    d.cluster[replica].halt(kill=True)
    d.say(f"{replica} killed")
    load.wait(DEAD)
    after = load.read_p99(killed, time.monotonic())
    acked = load.acked_since(killed, master)
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

    d.restore()  # started again; its replication resumed, its kept relay log applied first
    waiting = _acknowledges(d, replica, SETTLE * 5)
    result.bound(f"{replica} follows {master} again, acknowledging its commits", waiting is None, waiting or "yes")  # fmt: skip


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
