"""``python -m bench.compare.run`` end to end, at a size a test can afford.

The whole benchmark runs once (its own MariaDB, memcached and Redis, the three builds and
the hand-built pages under gunicorn, wrk, the mixed workload): it must finish, find that
every build answers as pinboard does, serve every request without an error, and write its
figures.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bench.compare.operations import OPERATIONS
from tests.conftest import unavailable
from toolkit.servers.mariadb import MariaDBServer
from toolkit.servers.memcached import MemcachedServer
from toolkit.servers.redis import RedisServer

ROOT = Path(__file__).resolve().parents[2]
BUILDS = ("pinboard", "orm", "cached")


def test_a_small_run_measures_every_operation_on_every_build(tmp_path: Path) -> None:
    for server in (MariaDBServer, MemcachedServer, RedisServer):
        if not server.available():
            unavailable(server.name, server.available().reason)
    if shutil.which("wrk") is None:
        unavailable("wrk", "it is not installed (Debian package wrk)")
    try:
        import MySQLdb  # noqa: F401
    except ImportError:
        unavailable("mysqlclient", "it is not installed (requirements-mysql.txt)")
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Figures\n\n<!-- results -->\nPREVIOUS RUN\n<!-- /results -->\n\nAfter.\n")
    small = [
        "--sizes", "1500", "2500", "--pinners", "120", "--probes", "20", "--requests", "6",
        "--seconds", "1", "--mixed-minutes", "0.25", "--rounds", "1", "--shards", "8",
        "--out", str(tmp_path), "--doc", str(doc),
    ]  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "bench.compare.run", *small],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
        timeout=600,
    )
    results = json.loads((tmp_path / "results.json").read_text())
    names = [op.name for op in OPERATIONS]
    assert list(results["throughput"]) == names
    assert sorted(results["sizes"]) == ["1500", "2500"]
    for found in results["sizes"].values():  # each size alongside the 1,500-pin reference
        for sides in found.values():
            for side in BUILDS:
                reference = sides[side]["reference"]
                assert reference["warm"]["p50"] > 0 and reference["cold"]["p50"] > 0
    for name, sides in results["throughput"].items():
        for side in BUILDS:
            for mode in ("warm", "cold"):
                run = sides[side][mode]
                assert run["requests"] > 0 and run["errors"] == 0, (name, side, mode, run)
        assert ("raw" in sides) == name.endswith("page")
    feed = results["statements"]["home feed"]
    assert feed["pinboard"]["warm"] == 0 and 0 < feed["pinboard"]["cold"] <= 6
    assert feed["orm"]["warm"] > 0  # the ORM build reads MySQL every time
    assert feed["cached"]["warm"] == 0 < feed["cached"]["cold"]  # its cache, once filled
    mixed = results["mixed"]
    for side in BUILDS:
        operations = mixed[side]["operations"]
        assert {"like", "save", "comment", "follow", "pin"} <= set(operations)
        assert sum(op["errors"] for op in operations.values()) == 0, operations
    redis = results["redis_check"]  # the mix's follows and saves, in Redis as in MySQL
    assert redis["graph_keys"] > 0 and redis["feeds"] > 0
    assert redis["graph_differ"] == redis["feeds_differ"] == 0, redis["drift"]
    assert (tmp_path / "throughput.png").stat().st_size > 1000
    assert (tmp_path / "p50-by-size.png").stat().st_size > 1000
    text = doc.read_text()
    assert "PREVIOUS RUN" not in text and text.endswith("<!-- /results -->\n\nAfter.\n")
    assert "| board pins | pinboard |" in text and "| board pins | cached ORM |" in text
    assert "warm >= 1.5x cached" in text
