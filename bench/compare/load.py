"""Driving a server with wrk, and what its processes spent meanwhile (from /proc).

``drive`` runs wrk with paths.lua over a file of paths (each thread takes its own slice),
and returns wrk's figures with the server's CPU time per request: the user + system time
of the gunicorn master and its workers, read from /proc before and after.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LUA = Path(__file__).with_name("paths.lua")
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Run:
    requests: int
    seconds: float
    bytes: int
    errors: int  # connection errors, timeouts and non-2xx answers
    p50_ms: float
    p99_ms: float
    mean_ms: float
    cpu_ms: float  # server CPU time (all its processes) per request
    connections: int
    exhausted: bool  # a run over each path once ran out of paths before its time was up

    @property
    def rps(self) -> float:
        """Requests per second; for a run that ran out of paths, by Little's law (every
        connection busy until then): wrk's duration would count the idle time after."""
        if self.exhausted:
            return 1000 * self.connections / self.mean_ms if self.mean_ms else 0.0
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def bytes_per_request(self) -> float:
        return self.bytes / self.requests if self.requests else 0.0

    def figures(self) -> dict[str, Any]:
        """What the report shows of a run (results.json)."""
        return {
            "rps": round(self.rps, 1),
            "rps_by": "Little's law" if self.exhausted else "wrk",
            "p50_ms": self.p50_ms,
            "p99_ms": self.p99_ms,
            "errors": self.errors,
            "requests": self.requests,
            "cpu_ms": round(self.cpu_ms, 2),
            "bytes": round(self.bytes_per_request),
        }


def median(runs: list[Run]) -> dict[str, Any]:
    """The figures of the run of median req/s (of runs taken in turns with another's)."""
    return sorted(runs, key=lambda run: run.rps)[len(runs) // 2].figures()


def drive(
    port: int,
    paths: Path,
    *,
    seconds: float,
    connections: int,
    threads: int = 2,
    once: bool = False,
    server_pid: int,
) -> Run:
    """wrk against 127.0.0.1:``port``; with ``once``, each path is asked for once at most."""
    before = tree_cpu_seconds(server_pid)
    argv = [
        "wrk", f"-t{threads}", f"-c{connections}", f"-d{max(1, round(seconds))}s",
        "--timeout", "10s", "-s", str(LUA), f"http://127.0.0.1:{port}",
        "--", str(paths), str(threads), "1" if once else "0",
    ]  # fmt: skip
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=seconds + 60)
    cpu = tree_cpu_seconds(server_pid) - before
    found = json.loads(out.stdout.strip().splitlines()[-1])
    errors = found["errors"]
    failed = sum(n for status, n in found["statuses"] if status >= 300)
    requests = found["requests"]
    total = sum(1 for _ in paths.open()) if once else 0
    return Run(
        requests=requests,
        seconds=found["duration_us"] / 1e6,
        bytes=found["bytes"],
        errors=errors["connect"] + errors["read"] + errors["write"] + errors["timeout"] + failed,
        p50_ms=found["p50_us"] / 1000,
        p99_ms=found["p99_us"] / 1000,
        mean_ms=found["mean_us"] / 1000,
        cpu_ms=1000 * cpu / requests if requests else float("nan"),
        connections=connections,
        exhausted=once and requests >= total - connections,
    )


def write_paths(file: Path, lines: list[str]) -> Path:
    file.write_text("".join(line + "\n" for line in lines))
    return file


# -- /proc ----------------------------------------------------------------------------


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += children(current)
    return found


def cpu_seconds(pid: int) -> float:
    """User + system time of a process and of its children it has reaped."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(n) for n in fields[11:15]) / TICKS


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of a process tree (a gunicorn master and its workers), including workers
    that exited meanwhile (recycled after max_requests): the master reaped them."""
    return sum(cpu_seconds(p) for p in tree(pid))


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
