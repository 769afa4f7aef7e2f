"""The local cluster's commands: ``up``, ``down`` and ``status``, one ``up`` or ``down`` at a
time per cluster directory; and ``fence HOST HOST:PORT``, the cluster's fence command
(``PINBOARD_FENCE_COMMAND``, shardstore/control/fencing.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from toolkit.cluster import replication
from toolkit.cluster.bring_up import BringUp
from toolkit.cluster.files import locked
from toolkit.cluster.plan import DEFAULT_DIR, REPLICAS, SHARDS, SPARES
from toolkit.cluster.state import Cluster
from toolkit.processes import HOST


def up(
    directory: Path = DEFAULT_DIR,
    *,
    shards: int | None = None,
    seed: bool = True,
    monitoring: bool = True,
    backups: bool = True,
    replicas: int = REPLICAS,
    spares: int = len(SPARES),
    detached: bool = True,
    out: TextIO = sys.stdout,
) -> Cluster:
    """Start what is not running, set up what is not set up; the cluster (with Prometheus and
    its exporters unless ``monitoring`` is false, ``replicas`` replicas per master and
    ``spares`` spare MariaDB servers, at its first ``up``)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    with locked(directory):
        cluster = Cluster(directory, detached=detached)
        BringUp(cluster, out).run(shards=shards, seed=seed, monitoring=monitoring, backups=backups, replicas=replicas, spares=spares)  # fmt: skip
        return cluster


def down(directory: Path = DEFAULT_DIR, *, out: TextIO = sys.stdout) -> bool:
    """Stop every process the cluster started; whether all are gone."""
    with locked(Path(directory)):
        return Cluster.load(directory).down(out)


def fence(directory: Path, host: str, target: str, *, out: TextIO = sys.stdout) -> int:
    """Stop the MariaDB server ``host`` of the cluster at once (``kill -9``), so that it takes
    no write: exit status 0 once it does not run. ``target`` (its ``host:port`` in the shard
    map) must be the one the cluster gave it: the fence never stops anything else."""
    cluster = Cluster.load(directory)
    if host not in cluster.mysql_servers or target != f"{HOST}:{cluster.port(host)}":
        out.write(f"{host} at {target} is not a MariaDB server of the cluster\n")
        return 2
    if not cluster.running(host):
        out.write(f"{host} does not run\n")
        return 0
    process = cluster.processes[host]
    pid = process.pid
    process.halt(kill=True)
    out.write(f"{host} (pid {pid}) stopped with SIGKILL\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m toolkit.cluster",
        description="The local cluster: the production shape on one machine, on loopback,"
        " up with one command.",
    )
    parser.add_argument("command", choices=("up", "down", "status", "fence"))
    parser.add_argument("target", nargs="*", help="fence: the host's name and host:port")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="default: var/cluster")
    parser.add_argument(
        "--shards", type=int, default=None, help=f"shards of a new cluster (default {SHARDS})"
    )
    parser.add_argument("--no-seed", action="store_true", help="no demo pinners")
    parser.add_argument("--no-backups", action="store_true", help="a new cluster with neither archiver nor backup schedule")  # fmt: skip
    parser.add_argument(
        "--replicas", type=int, default=REPLICAS, help=f"per master, of a new cluster (1 or {REPLICAS}, the default)"
    )  # fmt: skip
    parser.add_argument(
        "--spares", type=int, default=len(SPARES), help=f"spare MariaDB servers of a new cluster (0 to {len(SPARES)}, the default)"
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.command == "up":
        up(args.dir, shards=args.shards, seed=not args.no_seed, backups=not args.no_backups, replicas=args.replicas, spares=args.spares)  # fmt: skip
        return 0
    if not (args.dir / "cluster.json").is_file():
        print(f"no cluster in {args.dir}")
        return 1 if args.command == "status" else 0
    if args.command == "down":
        return 0 if down(args.dir) else 1
    if args.command == "fence":
        if len(args.target) != 2:
            parser.error("fence needs HOST HOST:PORT")
        return fence(args.dir, *args.target)
    cluster = Cluster.load(args.dir)
    cluster.report(sys.stdout)
    replicas = replication.replicas(cluster)
    replication.report(replicas, sys.stdout)
    paired = replication.report_pairs(cluster, sys.stdout)
    alive = all(row.alive for row in cluster.status())
    return 0 if alive and paired and all(replica.running for replica in replicas) else 1
