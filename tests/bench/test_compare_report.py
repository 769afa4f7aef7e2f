"""The report states each target of each operation as met or missed, against both ORM
builds, and shows the three builds side by side."""

from __future__ import annotations

from typing import Any

from bench.compare import report


def run(rps: float, cpu_ms: float, p99_ms: float = 10.0) -> dict[str, Any]:
    return {"rps": rps, "p50_ms": 1.0, "p99_ms": p99_ms, "cpu_ms": cpu_ms, "bytes": 100,
            "errors": 0}  # fmt: skip


def results() -> dict[str, Any]:
    """ "pin" meets every target; "board" misses the cached one (1.4x), the cold one (1.4x)
    and CPU (the cached build spends less, cold); in the mix, pinboard serves 1.6x the
    cached build's requests, with a worse p99 on "like"."""
    throughput = {
        "pin": {
            "pinboard": {"warm": run(2000, 1.0), "cold": run(900, 2.0)},
            "orm": {"warm": run(900, 3.0), "cold": run(550, 3.0)},
            "cached": {"warm": run(1200, 1.5), "cold": run(500, 3.5)},
        },
        "board": {
            "pinboard": {"warm": run(1400, 1.0), "cold": run(700, 2.0)},
            "orm": {"warm": run(500, 3.0), "cold": run(500, 3.0)},
            "cached": {"warm": run(1000, 1.2), "cold": run(450, 1.9)},
        },
    }
    one_size = {mode: {"p50": 1.0, "p99": 2.0} for mode in ("warm", "cold")}  # no reference
    statements = {op: {key: {"cold": 1, "warm": 0} for key in report.BUILDS} for op in throughput}

    def mix(rps: float, like_p99: float) -> dict[str, Any]:
        operations = {
            "pin": {"requests": 10, "errors": 0, "p50_ms": 1, "p95_ms": 2, "p99_ms": 5},
            "like": {"requests": 10, "errors": 0, "p50_ms": 1, "p95_ms": 2, "p99_ms": like_p99},
        }
        return {"minutes": 1, "requests_per_second": rps, "operations": operations,
                "worker_rss": [], "workers_restarted": False}  # fmt: skip

    return {
        "setup": {
            "mariadb": "11",
            "cpus": 2,
            "gunicorn": "2 x 4",
            "connections": 16,
            "pinners": 10,
            "boards": 40,
            "shards": 8,
        },
        "sizes": {"1000": {op: dict.fromkeys(report.BUILDS, one_size) for op in throughput}},
        "throughput": throughput,
        "statements": statements,
        "mixed": {"pinboard": mix(800, 30), "cached": mix(500, 20), "orm": mix(300, 40)},
    }


def test_each_operation_meets_or_misses_each_target() -> None:
    found = results()
    pin = {name: ok for name, (_, ok) in report.operation_targets(found, "pin").items()}
    assert pin == {"warm/plain": True, "warm/cached": True, "cold/plain": True, "cpu": True,
                   "mixed p99": True}  # fmt: skip
    board = {name: ok for name, (_, ok) in report.operation_targets(found, "board").items()}
    # No "mixed p99": the mix has no "board".
    assert board == {"warm/plain": True, "warm/cached": False, "cold/plain": False, "cpu": False}
    mixed = report.mixed_targets(found["mixed"])
    assert [ok for _, ok in mixed] == [True, True, False]  # 1.6x; pin's p99, like's p99
    assert mixed[0][0].startswith("mixed workload: 1.60x the cached ORM's requests/s")


def test_the_report_shows_three_builds_and_the_verdicts() -> None:
    text = report.tables(results())
    for build in ("| pin | pinboard |", "| pin | plain ORM |", "| pin | cached ORM |"):
        assert build in text
    assert "| pin | 2.22x | 1.64x | 1.67x | 1.80x | met | met | met | met | met |" in text
    assert (
        "| board | 2.80x | 1.40x | 1.40x | 1.56x | met | **missed** | **missed** | **missed** | - |"
        in text
    )
    assert "cached ORM: 500 requests/s" in text
    summary = report.summary(results())
    assert "NO  board: warm 1.40x the cached ORM (>= 1.5)" in summary
    assert "NO  mixed workload, like: p99 30 ms, the cached ORM's 20 ms" in summary


def test_a_run_without_the_cached_build_judges_the_plain_one_alone() -> None:
    found = results()
    for sides in found["throughput"].values():
        del sides["cached"]
    del found["mixed"]
    assert report.builds(found) == ["pinboard", "orm"]
    assert set(report.operation_targets(found, "pin")) == {"warm/plain", "cold/plain", "cpu"}
    assert "cached" not in report.tables(found)
