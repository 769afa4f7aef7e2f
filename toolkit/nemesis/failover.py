"""Emergency failover in the incidents the emergency drill does not make: a replica that
quietly stopped receiving (a), a master cut off from the operator only (b), a master cut
off from its replica and the operator but still reached by the site (c), a replica
stalled past what used to be the semi-sync timeout (g), a replica restarted after its
master died, the failover then killed inside its commit point (k), and the guard cut off
from a master that lives on (l). Each under load, on a fresh cluster, every acknowledged
write read back at the end."""

from __future__ import annotations

import os
import signal
import time

from shardstore import Topology
from toolkit.drills.base import SETTLE, WARM_UP, DrillError, Ran, Result, healthy_pair, wait_lost
from toolkit.load.traffic import Load

from .base import Nemesis, writable_within
from .operator import PLAN_STEP, left_open

#: The emergency drill's bound: the failed master's shards take writes again within it.
WINDOW = 15.0
#: Longer than the 5 s after which semi-sync used to fall back to asynchronous.
STALL = 7.0


def _started(n: Nemesis, result: Result, title: str) -> tuple[Topology, str, str, Load]:
    topology = n.topology()
    master, replica = healthy_pair(n, topology)
    result.title = title.format(master=master, replica=replica)
    load = n.load(topology)
    if master not in load.groups:
        raise DrillError(f"the load has no pinner on {master}")
    load.wait(WARM_UP)
    return topology, master, replica, load


def _refused(result: Result, n: Nemesis, ran: Ran, before: Topology, why: str) -> None:
    """Bounds of a refusal: non-zero exit with the reason, nothing promoted or published."""
    said = [line.strip() for line in ran.output.splitlines() if line.startswith("shardstore:")]
    reason = said[-1] if said else ran.tail(1)
    result.bound(f"failover --emergency refused ({why})", ran.returncode != 0, f"exit {ran.returncode}: {reason.strip()}")  # fmt: skip
    after = n.topology()
    result.bound("the shard map unchanged", after.version == before.version, f"v{before.version} -> v{after.version}")  # fmt: skip


def _took_over(result: Result, load: Load, ran: Ran, master: str, since: float) -> None:
    ok = result.bound("failover --emergency succeeded", ran.returncode == 0, f"exit {ran.returncode} in {ran.seconds:.1f} s")  # fmt: skip
    if not ok:
        result.figures += [f"| {line}" for line in ran.tail().splitlines()]
        return
    took = writable_within(load, master, since, WINDOW)
    result.bound(
        f"shards of {master} writable again within {WINDOW:g} s of the command's end",
        took is not None,
        "never" if took is None else f"{took:.2f} s",
    )


def replica_stopped(n: Nemesis, result: Result) -> None:
    """a. A replica's I/O thread stopped, then its master killed: the failover refuses;
    with --accept-data-loss it proceeds and says which GTIDs may be lost."""
    topology, master, replica, load = _started(
        n, result, "{replica}'s I/O thread stopped, then {master} killed (kill -9)"
    )
    with n.admin(topology, replica) as r:
        r.stop_receiving()
    n.say(f"{replica} receives nothing; kill -9 {master} in 2 s")
    load.wait(2.0)
    n.process(master).halt(kill=True)
    ran = n.manage("shardstore", "failover", master, "--emergency")
    _refused(result, n, ran, topology, f"{replica} stopped receiving before {master} died")

    ran = n.manage("shardstore", "failover", master, "--emergency", "--accept-data-loss")
    since = time.monotonic()
    gap = next((line for line in ran.output.splitlines() if "may have had" in line), "")
    result.bound("with --accept-data-loss the journal names the GTIDs that may be lost", bool(gap), gap.strip() or ran.tail(3))  # fmt: skip
    _took_over(result, load, ran, master, since)
    load.wait(SETTLE)
    n.finish(result, load)


def operator_cut_off(n: Nemesis, result: Result) -> None:
    """b. The master alive but cut off from the operator only: the failover refuses, since
    its replica still receives from it; the site writes on."""
    topology, master, replica, load = _started(
        n, result, "{master} cut off from the operator only (its replica {replica} still sees it)"
    )
    operator = n.namespace("operator")
    operator.cut([n.cluster.port(master)], f"the operator loses {master}")
    cut = time.monotonic()
    n.say(f"{operator.cuts[-1]}; failover {master} --emergency from there")
    ran = n.manage_in(operator, "shardstore", "failover", master, "--emergency")
    _refused(result, n, ran, topology, f"{replica} still receives from {master}")
    acked = load.acked_since(cut, master)
    result.bound(f"{master}'s shards take writes all along", acked > 0, f"{acked} acknowledged since the cut")  # fmt: skip
    operator.heal()
    load.wait(SETTLE)
    n.finish(result, load)


def master_isolated(n: Nemesis, result: Result) -> None:
    """c. The master cut off from its replica and from the operator, still reached by the
    site: the failover fences it (the cluster's fence command stops it) and promotes the
    replica; nothing acknowledged is lost (semi-sync acknowledges no write the replica
    did not receive)."""
    topology = n.topology()
    master, replica = healthy_pair(n, topology)
    n.say(f"{replica} moves to a test host of its own")
    host = n.namespace("replica", moves=[replica])
    operator = n.namespace("operator")
    healthy_pair(n, topology)  # replicating again, through the link
    topology, master, replica, load = _started(
        n, result, "{master} cut off from {replica} and the operator, still reached by the site"
    )
    port = n.cluster.port(master)
    host.cut([port], f"{replica} loses {master}")
    operator.cut([port], f"the operator loses {master}")
    cut = time.monotonic()
    n.say(f"cut {master} off; {wait_lost(n, topology, replica)} on {replica}")
    ran = n.manage_in(operator, "shardstore", "failover", master, "--emergency")
    since = time.monotonic()
    result.figure(f"failover command: exit {ran.returncode} in {ran.seconds:.1f} s ({since - cut:.1f} s after the cut)")  # fmt: skip
    fenced = not n.cluster[master].alive
    result.bound(f"the fence command stopped {master}", fenced, "stopped" if fenced else "still runs")  # fmt: skip
    _took_over(result, load, ran, master, since)
    load.wait(SETTLE)
    n.finish(result, load)


def replica_stalled(n: Nemesis, result: Result) -> None:
    """g. A replica stalled (SIGSTOP) for longer than semi-sync used to wait, then its master
    killed: the master acknowledged nothing meanwhile, and the failover loses nothing."""
    topology, master, replica, load = _started(
        n, result, "{replica} stalled past the semi-sync timeout, then {master} killed"
    )
    stalled = n.process(replica)
    assert stalled.pid is not None
    os.kill(stalled.pid, signal.SIGSTOP)
    began = time.monotonic()
    try:
        load.wait(STALL)
        acked = load.acked_since(began + 0.5, master)  # writes in flight at the stall may land
        result.figure(f"writes acknowledged on {master}'s shards while {replica} was stalled {STALL:g} s: {acked}")  # fmt: skip
        n.process(master).halt(kill=True)
    finally:
        os.kill(stalled.pid, signal.SIGCONT)
    n.say(f"kill -9 {master}; {replica} runs again: {wait_lost(n, topology, replica)}")
    ran = n.manage("shardstore", "failover", master, "--emergency")
    _took_over(result, load, ran, master, time.monotonic())
    load.wait(SETTLE)
    n.finish(result, load)


#: How long the replica applies nothing (its SQL thread stopped) while it acknowledges.
BEHIND = 3.0


def replica_restarted(n: Nemesis, result: Result) -> None:
    """k. A replica that receives and acknowledges but applies nothing (its SQL thread
    stopped), its master killed, then the replica killed and started again: its relay log
    is kept (``skip_slave_start``). The failover refuses a restarted candidate; with
    ``--accept-data-loss`` it applies the kept relay log first, and is killed inside its
    commit point (the replica's replication reset), then resumed: nothing acknowledged
    lost."""
    topology, master, replica, load = _started(
        n, result, "{replica} restarted after {master} died, its relay log not applied"
    )
    with n.admin(topology, replica) as r:
        r.query("STOP SLAVE SQL_THREAD")
    stopped = time.monotonic()
    load.wait(BEHIND)
    n.process(master).halt(kill=True)
    behind = load.acked_since(stopped + 0.5, master)
    n.process(replica).halt(kill=True)
    n.cluster[replica].restart()
    result.figure(f"{behind} writes acknowledged on {master}'s shards in {BEHIND:g} s while {replica} applied nothing; both killed, {replica} started again")  # fmt: skip
    ran = n.manage("shardstore", "failover", master, "--emergency")
    _refused(result, n, ran, topology, f"{replica} was restarted")

    command = ["failover", master, "--emergency", "--accept-data-loss"]
    plan = PLAN_STEP.findall(n.manage("shardstore", *command, "--dry-run").output)
    reset = next((int(k) for k, name in plan if name.startswith("stop replication on")), 0)
    if not reset:
        raise DrillError(f"the emergency failover's plan has no replication reset: {plan}")
    killed = n.manage_until_step(reset, "shardstore", *command, inside=True)
    if killed.returncode != -signal.SIGKILL:
        raise DrillError(f"the failover was not killed inside step {reset}: exit {killed.returncode}: {killed.tail(5)}")  # fmt: skip
    operation = left_open(n, f"the failover killed inside step {reset}")
    aborted = n.manage("shardstore", "abort", str(operation["id"]))
    said = next((line.strip() for line in aborted.output.splitlines() if "resume the operation" in line), "")  # fmt: skip
    result.bound("abort refuses: the replication reset took effect", aborted.returncode != 0 and bool(said), said or aborted.tail(1))  # fmt: skip
    ran = n.manage("shardstore", "resume", str(operation["id"]))
    _took_over(result, load, ran, master, time.monotonic())
    load.wait(SETTLE)
    n.finish(result, load)


#: How long the guard cut off from a master runs: past its confirmation, a few passes more.
GUARD_WATCH = 15.0


def guard_cut_off(n: Nemesis, result: Result) -> None:
    """l. A guard cut off from a master that is alive (its replica still sees it): no
    failover, and its decision is ``ambiguous`` (which ``MasterWaitsForAPerson`` pages on);
    the master's shards take writes all along."""
    topology, master, _, load = _started(
        n, result, "the guard cut off from {master}, which lives on ({replica} still sees it)"
    )
    host = n.namespace("guard")
    host.cut([n.cluster.port(master)], f"the guard loses {master}")
    cut = time.monotonic()
    n.say(f"{host.cuts[-1]}; guard run there for {GUARD_WATCH:g} s")
    n.manage_in(host, "shardstore", "guard", "run", "--instance", "cut-off-guard", "--confirm", "3", timeout=GUARD_WATCH)  # fmt: skip
    said = n.manage("shardstore", "guard", "status").output
    decided = [line.strip() for line in said.splitlines() if f" {master}: " in line]
    result.bound(f"the guard's decision on {master}: ambiguous", any(f"ambiguous {master}:" in line for line in decided), decided[0] if decided else said.strip()[-200:])  # fmt: skip
    after = n.topology()
    result.bound("no failover: the shard map unchanged", after.version == topology.version, f"v{topology.version} -> v{after.version}")  # fmt: skip
    acked = load.acked_since(cut, master)
    result.bound(f"{master}'s shards take writes all along", acked > 0, f"{acked} acknowledged since the cut")  # fmt: skip
    host.heal()
    load.wait(SETTLE)
    n.finish(result, load)
