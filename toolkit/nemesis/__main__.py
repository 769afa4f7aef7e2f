"""``python -m toolkit.nemesis [CASE...] [--dir var/nemesis]``: run the fault injector's cases,
each on a fresh cluster, print each one's figures, exit 1 if any bound failed."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from toolkit.drills.base import Result, run_reported

from . import CASES
from .base import DEFAULT_DIR, Nemesis


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m toolkit.nemesis",
        description="Faults the drills do not make, each on a fresh local cluster under load.",
    )
    parser.add_argument("names", nargs="*", metavar="CASE", help=f"of {', '.join(CASES)} (default: all)")  # fmt: skip
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="where each case's cluster lives")  # fmt: skip
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in CASES]
    if unknown:
        parser.error(f"no case {', '.join(unknown)}; there are {', '.join(CASES)}")
    if os.geteuid() != 0:
        # Namespaces and their rules need CAP_SYS_ADMIN and CAP_NET_ADMIN: no skipping.
        print("The nemesis makes network namespaces: run it as root.")
        return 2

    def run(name: str, result: Result) -> None:
        with Nemesis.fresh(args.dir) as nemesis:
            CASES[name](nemesis, result)

    return run_reported(args.names or list(CASES), run, kind="case")


if __name__ == "__main__":
    sys.exit(main())
