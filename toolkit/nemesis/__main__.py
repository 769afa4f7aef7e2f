"""``python -m toolkit.nemesis [CASE...] [--dir var/nemesis]``: run the fault injector's cases,
each on a fresh cluster, print each one's figures, exit 1 if any bound failed."""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

from toolkit.drills.base import DrillError, Result

from . import CASES
from .base import DEFAULT_DIR, Nemesis
from .network import NetworkError


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

    results: list[Result] = []
    for name in args.names or list(CASES):
        result = Result(name, kind="case")
        print(f"-- {name}", flush=True)
        began = time.monotonic()
        try:
            with Nemesis.fresh(args.dir) as nemesis:
                CASES[name](nemesis, result)
        except (DrillError, NetworkError) as error:
            result.error = str(error)
        except Exception as error:  # noqa: BLE001 - reported, and the next case runs
            frame = traceback.extract_tb(error.__traceback__)[-1]
            result.error = f"{type(error).__name__}: {error} (at {Path(frame.filename).name}:{frame.lineno})"  # fmt: skip
            traceback.print_exc()
        result.seconds = time.monotonic() - began
        results.append(result)
        print(result.block(), flush=True)
    failed = [r for r in results if not r.ok]
    print(
        f"\n{len(results) - len(failed)} of {len(results)} cases passed"
        + (f"; failed: {', '.join(r.name for r in failed)}" if failed else "")
    )
    for result in failed:
        print(result.failures())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
