"""``python -m toolkit.drills [NAME...] [--dir var/cluster]``: run drills, print each one's
figures, exit 1 if any bound failed (2 if the cluster is not running)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from toolkit.cluster.plan import DEFAULT_DIR
from toolkit.cluster.state import Cluster

from . import DRILLS
from .base import Drills, Result, run_reported


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m toolkit.drills", description="Fault drills against the local cluster."
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"of {', '.join(DRILLS)} (default: all)")  # fmt: skip
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="the cluster's directory")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in DRILLS]
    if unknown:
        parser.error(f"no drill {', '.join(unknown)}; there are {', '.join(DRILLS)}")

    try:
        cluster = Cluster.load(args.dir)
    except FileNotFoundError:
        print(f"No cluster in {args.dir}: start one with `make cluster` first.")
        return 2
    dead = [row.name for row in cluster.status() if not row.alive]
    if dead:
        print(f"The cluster in {args.dir} is not all running ({', '.join(dead)} down): `make cluster`.")  # fmt: skip
        return 2

    drills = Drills(cluster)

    def after(result: Result) -> None:
        drills.stop_loads()
        restarted = drills.restore()
        if restarted:
            result.notes.append(f"restarted after the drill: {', '.join(restarted)}")

    try:
        return run_reported(
            args.names or list(DRILLS),
            lambda name, result: DRILLS[name](drills, result),
            after=after,
        )
    finally:
        drills.close()


if __name__ == "__main__":
    sys.exit(main())
