"""``python -m toolkit.drills [NAME...] [--dir var/cluster]``: run drills, print each one's
figures, exit 1 if any bound failed (2 if the cluster is not running)."""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

from toolkit.cluster.plan import DEFAULT_DIR
from toolkit.cluster.state import Cluster

from . import DRILLS
from .base import DrillError, Drills, Result


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
    results: list[Result] = []
    try:
        for name in args.names or list(DRILLS):
            result = Result(name)
            print(f"-- {name}", flush=True)
            began = time.monotonic()
            try:
                DRILLS[name](drills, result)
            except DrillError as error:
                result.error = str(error)
            except Exception as error:  # noqa: BLE001 - reported, and the next drill runs
                frame = traceback.extract_tb(error.__traceback__)[-1]
                where = f"{Path(frame.filename).name}:{frame.lineno}"
                result.error = f"{type(error).__name__}: {error} (at {where})"
                traceback.print_exc()
            drills.stop_loads()
            restarted = drills.restore()
            if restarted:
                result.notes.append(f"restarted after the drill: {', '.join(restarted)}")
            result.seconds = time.monotonic() - began
            results.append(result)
            print(result.block(), flush=True)
    finally:
        drills.close()
    failed = [r for r in results if not r.ok]
    print(
        f"\n{len(results) - len(failed)} of {len(results)} drills passed"
        + (f"; failed: {', '.join(r.name for r in failed)}" if failed else "")
    )
    # Again at the end, where a log's tail shows it: what failed, drill by drill.
    for result in failed:
        print(result.failures())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
