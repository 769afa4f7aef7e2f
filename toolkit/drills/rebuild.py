"""The rebuild drill: the host an emergency failover left out of service is wiped to an
empty server (as a replaced instance comes up), ``shardstore rebuild HOST`` makes it its
new master's replica again, and a planned failover hands the shards back to it, all under
load. Bounds: nothing acknowledged lost, both commands succeed, the moved shards writable
again within the planned failover's 3 s, and at the end the pair as it was before the
emergency: the rebuilt host master, its replica following it, semi-synchronously.

It runs after the ``emergency`` drill, on the pair that drill broke (the cluster has two
pairs, and the split drill needs the other): so the two leave the cluster whole.
"""

from __future__ import annotations

import re
import shutil
import time
from contextlib import closing

from shardstore import InvalidTopology, Topology
from shardstore.control import documents
from shardstore.control.mysql_hosts import HostError, endpoint
from shardstore.control.rebuild import paired_master
from toolkit.cluster import mysql
from toolkit.load.traffic import Load

from .base import WARM_UP, DrillError, Drills, Result, shards_of
from .failover import PLANNED_WINDOW, bound_failover, settle

#: The rebuild copies a whole host of the cluster (2,048 shards of 29 tables): minutes on a
#: busy 2-core machine. The load runs through it and the failover back, no longer than this.
REBUILD_CAP = 1800.0
_PROGRESS = re.compile(r"^\s+(shards \d+/\d+) \(at \+([\d.]+)s\)$", re.MULTILINE)


def dead_host(d: Drills, topology: Topology) -> tuple[str, str]:
    """A host out of service that masters nothing, and the master it was paired with: the
    one that left service last (the emergency drill's)."""
    history = d.source.history(documents.SHARDS)  # newest first

    def left(host: str) -> int:
        kept = (r.version for r in history if host not in r.document.get("out_of_service", []))
        return next(kept, 0)

    found = []
    for host in sorted(topology.out_of_service, key=left):
        try:
            found.append((host, paired_master(d.source, host)))
        except InvalidTopology:
            continue
    if not found:
        raise DrillError(
            "no host out of service to rebuild: run it after the emergency drill"
            ' (make drills DRILLS="emergency rebuild")'
        )
    return found[-1]


def wipe(d: Drills, host: str) -> None:
    """Stop ``host``'s server and start it again on an empty data directory, with the
    cluster's accounts (what provisioning gives a replaced instance)."""
    server = d.cluster.mariadb(host)
    if server.alive:
        server.halt(kill=True)
    assert server.home is not None
    for leftover in server.home.iterdir():
        if leftover.name == "data" or leftover.name.startswith(".prepared"):
            shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
    server.prepare()
    server.restart()
    mysql.create_users(d.cluster.port(host), d.cluster.secrets)


def rebuild(d: Drills, result: Result) -> None:
    topology = d.topology()
    host, master = dead_host(d, topology)
    result.title = f"rebuild of {host} from empty as {master}'s replica, then failover back"
    result.figure(f"shards {shards_of(topology, master)}: {master} -> {host}")
    d.say(f"wipe {host}: an empty server")
    wipe(d, host)

    load = d.track(Load(d.site, d.pinners(topology), topology, max_seconds=REBUILD_CAP)).start()
    load.wait(WARM_UP)
    d.say(f"manage.py shardstore rebuild {host}")
    sent = _sent_to_operators(d, topology, master)
    ran = d.manage("shardstore", "rebuild", host, timeout=REBUILD_CAP - 120)
    result.figure(f"rebuild command: exit {ran.returncode} in {ran.seconds:.1f} s")
    source = next((line.strip() for line in ran.output.splitlines() if "copying " in line), "")
    result.figure(f"{source or 'copied'}; {master} sent its operators and replicas {(_sent_to_operators(d, topology, master) - sent) / 1e6:.1f} MB meanwhile")  # fmt: skip
    progress = _PROGRESS.findall(ran.output)
    if progress:
        result.figure("copy progress: " + ", ".join(f"{p} at {float(at):.0f} s" for p, at in progress[-3:]))  # fmt: skip
    if not result.bound("rebuild command succeeded", ran.returncode == 0, f"exit {ran.returncode}"):
        result.figures += [f"| {line}" for line in ran.tail().splitlines()]
        d.finish(result, load)
        return

    d.say(f"manage.py shardstore failover {master} --to {host}")
    back = d.manage("shardstore", "failover", master, "--to", host)
    switched = time.monotonic()
    result.figure(f"failover back: exit {back.returncode} in {back.seconds:.1f} s")
    settle(load, master, switched, PLANNED_WINDOW)
    report = d.finish(result, load)
    bound_failover(result, back, report, master, PLANNED_WINDOW)

    after = d.topology()
    moved = [r for r in after.ranges if r.master == host]
    result.bound(
        f"map v{after.version} names {host} master, {master} its replica, both in service",
        bool(moved)
        and all(master in r.replicas for r in moved)
        and not {host, master} & set(after.out_of_service),
        ", ".join(f"{r.first}..{r.last}: {r.master}/{','.join(r.replicas)}" for r in moved)
        or "none",
    )
    result.bound(*_semi_sync_pair(d, after, host, master))


def _sent_to_operators(d: Drills, topology: Topology, host: str) -> int:
    """What ``host``'s server has sent the accounts a rebuild uses (the operators' and the
    replicas'), not the site's: the load's reads are left out (MariaDB's user statistics,
    switched on by the first call)."""
    with closing(d.admin(topology, host)) as h:
        h.query("SET GLOBAL userstat = 1")
        rows = h.query("SELECT USER, BYTES_SENT FROM information_schema.USER_STATISTICS")
    return sum(int(row["BYTES_SENT"]) for row in rows if row["USER"] != mysql.APP_USER)


def _semi_sync_pair(d: Drills, topology: Topology, host: str, replica: str) -> tuple[str, bool, str]:  # fmt: skip
    what = f"{replica} replicates from {host}, which waits for its acknowledgements"
    try:
        with closing(d.admin(topology, replica)) as r, closing(d.admin(topology, host)) as m:
            status = r.replica_status()
            rows = m.query("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_%'")
    except HostError as error:
        return what, False, str(error)
    semi = {str(row["Variable_name"]).lower(): str(row["Value"]) for row in rows}
    source = "{}:{}".format(*endpoint(topology.hosts[host]))
    following = status is not None and status.healthy and status.source == source
    on = semi.get("rpl_semi_sync_master_status") == "ON"
    clients = semi.get("rpl_semi_sync_master_clients", "0")
    return what, following and on and clients != "0", f"replicating={following}, semi-sync {semi.get('rpl_semi_sync_master_status')} with {clients} clients"  # fmt: skip
