"""pinboard against the plain Django-ORM build of the same site, and against that build with
django-cacheops caching its reads in Redis, side by side, on one machine.

    python -m bench.compare.run                     # 10k, 100k and 1M pins (about an hour)
    python -m bench.compare.run --sizes 10000 50000 --seconds 3 --mixed-minutes 1   # quick

What it does, in one run:

1. Starts a private MariaDB, memcached and Redis (bench/compare/stack.py); pinboard gets
   64 shards on that MariaDB, the ORM build (bench/compare/orm) a database beside them,
   which its cached variant (orm/settings_cached.py) reads too, with a Redis of its own.
2. Loads the data (bench/compare/dataset.py) at the first size, copies it into the ORM
   build's tables (bench/compare/copy.py: same rows, same IDs), issues the same API tokens
   on every side, and starts the three builds under gunicorn from gunicorn.conf.py (2
   workers x 4 threads, no worker recycling, so the CPU and memory figures are the
   workers').
3. At every size: p50 and p99 of each operation on the probes' entities (the same content
   at every size), one request at a time, warm and cold (cache pools emptied before every
   request), each path in turn on the growing data set and on a copy of the first size
   served alongside on servers of its own (bench/compare/sizes.py). Checks first that
   every build returns the same JSON items as pinboard for the same path.
4. At the largest size, for each operation and build (taking turns): wrk with 16
   connections over random entities, warm (after a pass over the same paths) and cold
   (caches emptied, then every request a different entity): req/s, p50, p99, errors,
   server CPU-ms per request, response bytes; and the SQL statements of one request cold
   and warm (MariaDB's count).
5. The mixed workload (bench/compare/mixed.py) on every build, and a pinboard worker's RSS
   over it; then pinboard's Redis follower graph and home feeds checked against MySQL.
6. Writes the figures (JSON), the plots (PNG) and the tables in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.compare import load, probe, sizes  # noqa: E402
from bench.compare.dataset import Dataset  # noqa: E402
from bench.compare.operations import OPERATIONS, Tokens, sample_paths  # noqa: E402
from bench.compare.stack import ORM_DATABASE, Stack, start_stack  # noqa: E402
from toolkit.site_processes import GunicornSite  # noqa: E402

SIDES = ("pinboard", "orm", "cached")
#: The hand-built pages (bench/compare/raw.py): the floor for a warm HTML page.
RAW_SETTINGS = "bench.compare.raw_settings"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--pinners", type=int, default=5_000)
    parser.add_argument("--boards-per-pinner", type=int, default=4)
    parser.add_argument("--probes", type=int, default=100, help="pinners whose pages never change")
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--requests", type=int, default=200, help="per operation, one at a time")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of each one-at-a-time measurement, of each wrk run "
                        "(the builds taking turns) and of each page against the hand-built "
                        "one")  # fmt: skip
    parser.add_argument("--seconds", type=float, default=4, help="per wrk run")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--mixed-minutes", type=float, default=10)
    parser.add_argument("--settings", default="pinboard.settings.prod")
    parser.add_argument("--seed", type=int, default=2012)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks",
                        help="where results.json and the plots go")  # fmt: skip
    parser.add_argument("--doc", default=str(ROOT / "docs" / "benchmarks.md"),
                        help="the page whose results section is rewritten ('' for none)")  # fmt: skip
    parser.add_argument("--only", nargs="*", help="operations to run (default: all)")
    args = parser.parse_args()
    args.sizes.sort()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pinboard-compare-") as tmp, ExitStack() as servers:
        stack = start_stack(Path(tmp), servers, shards=args.shards, settings=args.settings)
        results = Bench(stack, args).run(servers)
    results["seconds"] = round(time.monotonic() - started)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    from bench.compare import report

    report.write(results, args.out, Path(args.doc) if args.doc else None)
    print(report.summary(results))
    return 0


class Bench:
    def __init__(self, stack: Stack, args: argparse.Namespace) -> None:
        self.stack, self.args = stack, args
        self.rng = random.Random(args.seed)
        self.operations = [o for o in OPERATIONS if not args.only or o.name in args.only]
        self.servers: dict[str, GunicornSite] = {}
        self.tokens: Tokens = {}
        #: The first size, served alongside the growing data set (sizes.py): by build.
        self.reference: dict[str, sizes.Server] = {}

    def run(self, servers: ExitStack) -> dict[str, Any]:
        import MySQLdb

        stack, args = self.stack, self.args
        os.environ.update(stack.pinboard_env)  # this process reads and writes as pinboard does
        import django

        django.setup()
        data = self._first_size(args.sizes[0])
        self.mysql = MySQLdb.connect(**stack.mysql)
        results: dict[str, Any] = {"setup": self._setup(), "sizes": {}}
        for size in args.sizes:
            data.grow(size)
            self._serve(servers, data)
            if len(args.sizes) > 1 and not self.reference:
                self._serve_reference(servers, data)
            results["sizes"][str(size)] = self._sweep(data)
            print(f"{size:,} pins: {json.dumps(results['sizes'][str(size)])}", file=sys.stderr)
        results["throughput"] = self._throughput(data)
        results["statements"] = self._statements(data)
        if args.mixed_minutes > 0:
            from bench.compare import mixed

            results["mixed"] = mixed.run(
                self.servers, data, self.tokens, minutes=args.mixed_minutes,
                clients=args.connections, seed=args.seed,
            )  # fmt: skip
            results["redis_check"] = check_redis()
        return results

    # -- data and servers -----------------------------------------------------------

    def _first_size(self, pins: int) -> Dataset:
        from django.core.files.uploadedfile import SimpleUploadedFile

        from bench.bulkload import Loader
        from pinboard.pins.demo_images import demo_image
        from pinboard.pins.images import store_image

        picture = demo_image(random.Random(self.args.seed), "bench.png").read()
        image = store_image(SimpleUploadedFile("bench.png", picture, content_type="image/png"))
        loader = Loader(dict(self.stack.mysql), batch=5_000, threads=2)
        data = Dataset(self.stack, self.rng, image, loader)
        args = self.args
        started = time.monotonic()
        data.first(
            pinners=args.pinners, boards_per_pinner=args.boards_per_pinner, probes=args.probes,
            pins=pins,
        )  # fmt: skip
        print(f"loaded {pins:,} pins in {time.monotonic() - started:.0f}s", file=sys.stderr)
        return data

    def _serve(self, servers: ExitStack, data: Dataset) -> None:
        """(Re)start the builds on the data as it is now: the ORM build's tables copied
        afresh from pinboard's shards (its cache emptied: they were remade under it), the
        same tokens on every side."""
        for server in self.servers.values():
            server.stop()
        self._copy_to_orm()
        self._issue_tokens(data)
        self.stack.clear_caches()
        self._rebuild_feeds()
        print(f"settle: {self.stack.settle()}", file=sys.stderr)
        for side in (*SIDES, "raw"):
            self.servers[side] = self._start_site(servers, self.stack, side, data)
        self._check_same_answers(data)

    def _serve_reference(self, servers: ExitStack, data: Dataset) -> None:
        """A copy of the data as it is now, on servers of its own, every build serving it."""
        stack = sizes.copy_of(self.stack, servers)
        for side in SIDES:
            site = self._start_site(servers, stack, side, data)
            self.reference[side] = sizes.Server(site.port, stack.clear_caches)

    def _start_site(
        self, servers: ExitStack, stack: Stack, side: str, data: Dataset
    ) -> GunicornSite:
        """One build under gunicorn (from gunicorn.conf.py) on ``stack``'s servers, stopped
        when ``servers`` closes; "raw" is the hand-built pages."""
        app = "bench.compare.orm.wsgi" if side in ("orm", "cached") else "pinboard.wsgi"
        env = {
            "pinboard": stack.pinboard_env,
            "orm": stack.orm_env,
            "cached": stack.cached_env,
            "raw": {**stack.pinboard_env, "DJANGO_SETTINGS_MODULE": RAW_SETTINGS},
        }[side]
        site = GunicornSite(
            env, stack.tmp / f"gunicorn-{side}.log", app=app, workers=self.args.workers,
            threads=self.args.threads, extra_args=("--log-level", "warning", "--max-requests", "0"),
        )  # fmt: skip
        site.start()
        servers.callback(site.stop)
        site.wait_ready(path="/healthz" if side == "raw" else f"/api/v1/users/{data.probes[0]}")
        return site

    def _copy_to_orm(self) -> None:
        from bench.compare.copy import copy_into_orm
        from shardstore.topology import database_name

        self.stack.empty_orm_database()
        started = time.monotonic()
        shards = [database_name(n) for n in range(self.stack.topology.shard_count)]
        rows = copy_into_orm(self.mysql, shards, ORM_DATABASE)
        print(f"copied into the ORM build in {time.monotonic() - started:.0f}s: {rows}",
              file=sys.stderr)  # fmt: skip
        if self.tokens:
            self._orm_tokens()

    def _issue_tokens(self, data: Dataset) -> None:
        """API tokens for the probes and 2,000 other pinners (the feed's viewers), once."""
        if self.tokens:
            return
        from pinboard.users.queries import get_users
        from pinboard.users.tokens import issue_token

        others = [p for p in data.usernames if p not in set(data.probes)]
        viewers = data.probes + self.rng.sample(others, min(2_000, len(others)))
        for user in get_users(viewers):
            self.tokens[user["id"]] = issue_token(user)["token"]
        self._orm_tokens()

    def _rebuild_feeds(self) -> None:
        """Every pinner's home feed, from MySQL (``follower_graph repair``): the bulk load
        goes around Redis, and the check after the mix compares them all."""
        from pinboard.follows.actions import sync_redis

        started = time.monotonic()
        _, feeds = sync_redis(repair=True, wipe=False)
        print(f"repaired {feeds.feeds_repaired:,} of {feeds.feeds_checked:,} feeds in"
              f" {time.monotonic() - started:.0f}s", file=sys.stderr)  # fmt: skip

    def _orm_tokens(self) -> None:
        from bench.compare.copy import add_tokens

        add_tokens(self.mysql, ORM_DATABASE, self.tokens)

    def _check_same_answers(self, data: Dataset) -> None:
        """Every build answers each API read with pinboard's items (fields and values), and
        the hand-built pages are the site's, byte for byte."""
        for op in self.operations:
            lines = [
                line
                for probes in (True, False)
                for line in sample_paths(op, data, self.tokens, self.rng, 4, probes=probes)
            ]
            for line in lines:
                path = line.split("\t")[0]
                sides = ("pinboard", "raw") if op.page else SIDES
                bodies = [self._get(side, line) for side in sides]  # the site first: it fills
                if not op.page:
                    bodies = [json.loads(body) for body in bodies]
                    bodies = [found.get("items", found) for found in bodies]
                for side, body in zip(sides[1:], bodies[1:], strict=True):
                    if body != bodies[0]:
                        raise SystemExit(
                            f"{sides[0]} and {side} differ on {path}:\n"
                            f"{str(bodies[0])[:600]}\n{str(body)[:600]}"
                        )

    def _get(self, side: str, line: str) -> bytes:
        client = probe.Client(self.servers[side].port)
        try:
            status, body, _ = client.get(line)
        finally:
            client.close()
        if status != 200:
            raise SystemExit(f"{side}: GET {line.split(chr(9))[0]} answered {status}")
        return body

    def _setup(self) -> dict[str, Any]:
        cursor = self.mysql.cursor()
        cursor.execute("SELECT VERSION()")
        return {
            "mariadb": cursor.fetchone()[0],
            "cpus": os.cpu_count(),
            "gunicorn": f"{self.args.workers} workers x {self.args.threads} threads",
            "connections": self.args.connections,
            "pinners": self.args.pinners,
            "boards": self.args.pinners * self.args.boards_per_pinner,
            "shards": self.args.shards,
        }

    # -- measurements ----------------------------------------------------------------

    def _sweep(self, data: Dataset) -> dict[str, Any]:
        """p50/p99 of each operation on the probes, one request at a time, warm and cold,
        each path in turn here and on the reference (sizes.py)."""
        found: dict[str, Any] = {}
        for op in self.operations:
            lines = sample_paths(op, data, self.tokens, self.rng, self.args.requests, probes=True)
            found[op.name] = {}
            for side in SIDES:
                here = sizes.Server(self.servers[side].port, self.stack.clear_caches)
                found[op.name][side] = sizes.measure(
                    lines, here, self.reference.get(side), rounds=self.args.rounds
                )
        return found

    def _throughput(self, data: Dataset) -> dict[str, Any]:
        """wrk on each operation, warm, then cold (caches emptied, each path once), the
        builds taking turns for ``--rounds`` rounds; the run of median req/s of each."""
        found: dict[str, Any] = {}
        for op in self.operations:
            warm = sample_paths(op, data, self.tokens, self.rng, 1_000, probes=False)
            cold = sample_paths(
                op, data, self.tokens, self.rng, 20_000, probes=False, distinct=True
            )
            runs: dict[str, dict[str, list[load.Run]]] = {
                s: {"warm": [], "cold": []} for s in SIDES
            }
            for n in range(self.args.rounds):
                order = [(side, self.servers[side]) for side in SIDES[:: -1 if n % 2 else 1]]
                for _, server in order:
                    self._drive(server, warm, once=True)  # fills the caches
                for side, server in order:
                    runs[side]["warm"].append(self._drive(server, warm, once=False))
                self.rng.shuffle(cold)  # other entities than last round's, the same for both
                for side, server in order:
                    self.stack.clear_caches()
                    runs[side]["cold"].append(self._drive(server, cold, once=True))
            found[op.name] = {
                side: {mode: load.median(taken) for mode, taken in modes.items()}
                for side, modes in runs.items()
            }
            for side, figures in found[op.name].items():
                print(f"{op.name:<14} {side:<8} warm {figures['warm']['rps']:8.0f}/s"
                      f" cold {figures['cold']['rps']:8.0f}/s", file=sys.stderr)  # fmt: skip
            if op.page:
                found[op.name]["raw"] = self._against_raw(warm)
        return found

    def _against_raw(self, paths: list[str]) -> dict[str, Any]:
        """The site's warm page and the hand-built one (which reads the caches the site
        fills), in alternating runs; the run of median req/s of each."""
        self._drive(self.servers["pinboard"], paths, once=True)
        runs: dict[str, list[load.Run]] = {"site": [], "warm": []}
        for _ in range(self.args.rounds):
            runs["site"].append(self._drive(self.servers["pinboard"], paths, once=False))
            runs["warm"].append(self._drive(self.servers["raw"], paths, once=False))
        return {key: load.median(taken) for key, taken in runs.items()}

    def _drive(self, server: GunicornSite, paths: list[str], *, once: bool) -> load.Run:
        assert server.pid is not None
        return load.drive(
            server.port, load.write_paths(self.stack.tmp / "paths.txt", paths),
            seconds=self.args.seconds, connections=self.args.connections, once=once,
            server_pid=server.pid,
        )  # fmt: skip

    def _statements(self, data: Dataset) -> dict[str, Any]:
        """SQL statements of one request, cold and warm, the fewest of three tries."""
        found: dict[str, Any] = {}
        for op in self.operations:
            line = sample_paths(op, data, self.tokens, self.rng, 1, probes=False)[0]
            found[op.name] = {}
            for side in SIDES:
                port = self.servers[side].port
                cold = [
                    probe.statements(self.mysql, port, line, before=self.stack.clear_caches)
                    for _ in range(3)
                ]
                warm = [probe.statements(self.mysql, port, line, before=None) for _ in range(3)]
                found[op.name][side] = {"cold": min(cold), "warm": min(warm)}
        return found


def check_redis() -> dict[str, Any]:
    """After the mix's follows, saves and pins: pinboard's Redis follower graph and home
    feeds against what its MySQL implies (``follower_graph check``), changing nothing."""
    from pinboard.follows.actions import sync_redis

    graph, feeds = sync_redis(repair=False, wipe=False)
    return {
        "graph_keys": graph.keys_checked,
        "graph_differ": graph.keys_repaired + graph.keys_removed,
        "feeds": feeds.feeds_checked,
        "feeds_differ": feeds.feeds_repaired,
        "drift": graph.drift + feeds.drift,
    }


if __name__ == "__main__":
    sys.exit(main())
