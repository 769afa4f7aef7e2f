"""Where a pinboard request's time goes, cold and warm: the benchmark's servers and data
(stack.py, dataset.py) at one small size, the site run in this process through Django's
test client, and for each operation its round trips per request (SQL statements, cache
and Redis calls) and the functions that took the most time under cProfile.

    python -m bench.compare.profile --only board "board page" --cold
    python -m bench.compare.profile --pins 5000 --requests 300 --top 30

Round trips are counted by the data plane's own metrics (shardstore/metrics.py), so they
are exact; the times are cProfile's, inflated by its overhead, and only rank the parts.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import random
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.compare.dataset import Dataset  # noqa: E402
from bench.compare.operations import OPERATIONS, Operation, Tokens, sample_paths  # noqa: E402
from bench.compare.run import Bench  # noqa: E402
from bench.compare.stack import Stack, start_stack  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pins", type=int, default=2_500)
    parser.add_argument("--pinners", type=int, default=1_000)
    parser.add_argument("--requests", type=int, default=200, help="per operation and state")
    parser.add_argument("--top", type=int, default=20, help="functions shown, by own time")
    parser.add_argument("--only", nargs="*", help="operations to profile (default: all)")
    state = parser.add_mutually_exclusive_group()
    state.add_argument("--cold", action="store_true", help="cold only")
    state.add_argument("--warm", action="store_true", help="warm only")
    parser.add_argument("--sort", default="tottime", help="a pstats order: tottime, cumulative")
    parser.add_argument("--seed", type=int, default=2012)
    args = parser.parse_args()
    with ExitStack() as servers:
        for op, lines, flush in measurements(servers, args):
            print(profile(op, lines, flush, args.top, warm_up=flush is None, sort=args.sort))
    return 0


def measurements(
    servers: ExitStack, args: argparse.Namespace
) -> Iterator[tuple[Operation, list[str], Callable[[], None] | None]]:
    """The site served in this process (``serve_in_process``), then for each operation
    chosen (``args.only``), cold and warm (or as ``args.cold``, ``args.warm`` say): its
    sampled request lines, and for cold what empties the caches before each request."""
    stack, data, tokens = serve_in_process(servers, args)
    states = ["cold"] if args.cold else ["warm"] if args.warm else ["cold", "warm"]
    rng = random.Random(args.seed)
    for op in OPERATIONS:
        if args.only and op.name not in args.only:
            continue
        lines = sample_paths(op, data, tokens, rng, args.requests, probes=False)
        for state in states:
            yield op, lines, stack.clear_caches if state == "cold" else None


def serve_in_process(servers: ExitStack, args: argparse.Namespace) -> tuple[Stack, Dataset, Tokens]:
    """The benchmark's servers (stopped when ``servers`` closes) and ``args.pins`` pins of
    its data, the site set up in this process, and API tokens of 100 random pinners and
    the probes (for the home feed)."""
    tmp = servers.enter_context(tempfile.TemporaryDirectory(prefix="pinboard-profile-"))
    stack = start_stack(Path(tmp), servers, shards=64, settings="pinboard.settings.prod")
    os.environ.update(stack.pinboard_env)
    import django

    django.setup()
    bench_args = argparse.Namespace(
        pinners=args.pinners, boards_per_pinner=4, probes=20, seed=args.seed, only=args.only
    )
    bench = Bench(stack, bench_args)
    data = bench._first_size(args.pins)
    bench._rebuild_feeds()
    gc.freeze()  # the data set's objects: a gunicorn worker holds none of them
    rng = random.Random(args.seed)
    return stack, data, viewer_tokens(data.probes + rng.sample(list(data.usernames), 100))


def viewer_tokens(pinners: list[int]) -> dict[int, str]:
    """An API token for each of these pinners (the home feed is a signed-in read)."""
    from pinboard.users.queries import get_users
    from pinboard.users.tokens import issue_token

    return {user["id"]: issue_token(user)["token"] for user in get_users(pinners)}


def profile(
    op: Operation,
    lines: list[str],
    before: Callable[[], None] | None,
    top: int,
    *,
    warm_up: bool,
    sort: str,
) -> str:
    """The round trips per request and the top functions of ``lines`` served in turn."""
    from django.test import Client

    get = getter(Client(HTTP_HOST="127.0.0.1"))

    for line in lines if warm_up else lines[:1]:  # cold: the code's first-use costs only
        get(line)
    profiler = cProfile.Profile()
    start = round_trips()
    for line in lines:
        if before is not None:
            before()
        profiler.enable()
        get(line)
        profiler.disable()
    made = {kind: (n - start[kind]) / len(lines) for kind, n in round_trips().items()}
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    total = stats.total_tt * 1000 / len(lines)  # type: ignore[attr-defined]
    state = "cold" if before is not None else "warm"
    trips = ", ".join(f"{kind} {n:.1f}" for kind, n in made.items())
    out.write(f"== {op.name}, {state}: {total:.2f} ms a request under cProfile; {trips}\n")
    stats.sort_stats(sort).print_stats(top)
    return out.getvalue()


def getter(client: Any) -> Callable[[str], None]:
    """A GET of a sampled line (``operations.sample_paths``: a path, and a token after a
    tab) through a Django test ``client``, as the load balancer forwards it."""

    def get(line: str) -> None:
        path, _, token = line.partition("\t")
        headers = {"Authorization": f"Token {token}"} if token else {}
        response = client.get(path, headers=headers, secure=True)
        if response.status_code != 200:
            raise SystemExit(f"GET {path} answered {response.status_code}")

    return get


def round_trips() -> dict[str, float]:
    """Round trips so far in this process, by kind, from the data plane's metrics."""
    from prometheus_client import REGISTRY

    def total(name: str) -> float:
        return sum(
            sample.value
            for metric in REGISTRY.collect()
            for sample in metric.samples
            if sample.name == name
        )

    return {
        "SQL": total("shardstore_sql_duration_seconds_count"),
        "cache": total("shardstore_cache_calls_total"),
        "Redis": total("shardstore_redis_calls_total"),
    }


if __name__ == "__main__":
    raise SystemExit(main())
