"""j. ZooKeeper's quorum lost for 30 s (its one server stopped with SIGSTOP) under write
load, no operation running: every process keeps serving the last shard map it saw, and
every range goes on taking writes (each operation's fence is in MySQL); then ZooKeeper
comes back and the processes follow it again."""

from __future__ import annotations

import os
import signal
import time

from toolkit.drills.base import SETTLE, WARM_UP, DrillError, Result

from .base import Nemesis

#: How long ZooKeeper is stopped: past the processes' lease (8 s) and their sessions.
STOPPED = 30.0


def quorum_lost(n: Nemesis, result: Result) -> None:
    topology = n.topology()
    result.title = f"ZooKeeper stopped {STOPPED:g} s under write load, no operation running"
    load = n.load(topology)
    load.wait(WARM_UP)
    zookeeper = n.process("zookeeper")
    if zookeeper.pid is None:
        raise DrillError("ZooKeeper does not run")
    os.kill(zookeeper.pid, signal.SIGSTOP)
    stopped = time.monotonic()
    n.say(f"ZooKeeper stopped (SIGSTOP) for {STOPPED:g} s")
    try:
        load.wait(STOPPED)
    finally:
        os.kill(zookeeper.pid, signal.SIGCONT)
    resumed = time.monotonic()
    late = stopped + 10.0  # past every process's lease
    for group in sorted(load.groups):
        acked = len([at for at in load.times(group) if late <= at <= resumed])
        result.bound(f"{group}'s shards take writes {late - stopped:g} s and more into the outage", acked > 0, f"{acked} acknowledged")  # fmt: skip
    load.wait(SETTLE)
    n.finish(result, load)
