"""The local cluster's commands: ``up``, ``down`` and ``status``, one ``up`` or ``down`` at a
time per cluster directory."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from toolkit.cluster import replication
from toolkit.cluster.bring_up import BringUp
from toolkit.cluster.files import locked
from toolkit.cluster.plan import DEFAULT_DIR, SHARDS
from toolkit.cluster.state import Cluster


def up(
    directory: Path = DEFAULT_DIR,
    *,
    shards: int | None = None,
    seed: bool = True,
    detached: bool = True,
    out: TextIO = sys.stdout,
) -> Cluster:
    """Start what is not running, set up what is not set up; the cluster."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    with locked(directory):
        cluster = Cluster(directory, detached=detached)
        BringUp(cluster, out).run(shards=shards, seed=seed)
        return cluster


def down(directory: Path = DEFAULT_DIR, *, out: TextIO = sys.stdout) -> bool:
    """Stop every process the cluster started; whether all are gone."""
    with locked(Path(directory)):
        return Cluster.load(directory).down(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m toolkit.cluster",
        description="The local cluster: the production shape on one machine, on loopback,"
        " up with one command.",
    )
    parser.add_argument("command", choices=("up", "down", "status"))
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="default: var/cluster")
    parser.add_argument(
        "--shards", type=int, default=None, help=f"shards of a new cluster (default {SHARDS})"
    )
    parser.add_argument("--no-seed", action="store_true", help="no demo pinners")
    args = parser.parse_args(argv)
    if args.command == "up":
        up(args.dir, shards=args.shards, seed=not args.no_seed)
        return 0
    if not (args.dir / "cluster.json").is_file():
        print(f"no cluster in {args.dir}")
        return 1 if args.command == "status" else 0
    if args.command == "down":
        return 0 if down(args.dir) else 1
    cluster = Cluster.load(args.dir)
    cluster.report(sys.stdout)
    replicas = replication.replicas(cluster)
    replication.report(replicas, sys.stdout)
    alive = all(row.alive for row in cluster.status())
    return 0 if alive and all(replica.running for replica in replicas) else 1
