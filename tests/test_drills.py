"""``python -m toolkit.drills`` without a running cluster says so and exits 2; a drill it
does not know is refused before anything runs. (The drills themselves run on the local
cluster: `make cluster drills`, in CI after the tests.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from toolkit.drills.base import Result
from toolkit.site_processes import ROOT


def drills(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolkit.drills", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_no_cluster_no_drill(tmp_path: Path) -> None:
    done = drills("--dir", str(tmp_path / "nothing"))
    assert done.returncode == 2
    assert "make cluster" in done.stdout


def test_an_unknown_drill_is_refused(tmp_path: Path) -> None:
    done = drills("memcached", "earthquake", "--dir", str(tmp_path))
    assert done.returncode == 2  # argparse's usage error
    assert "no drill earthquake" in done.stderr


def test_a_drill_fails_on_any_failed_bound_or_when_it_stopped_half_way() -> None:
    result = Result("x")
    result.bound("lost", True, 0)
    assert result.ok and "[ok] lost: 0" in result.block()
    result.bound("window", False, "4.00 s")
    assert not result.ok and "[FAILED] window: 4.00 s" in result.block()
    stopped = Result("y", error="no pinner on db1a")
    assert not stopped.ok and "the drill stopped: no pinner on db1a" in stopped.block()
