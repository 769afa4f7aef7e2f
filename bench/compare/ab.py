"""One change measured on its own: the same requests served the way the code is now and
the way it was before the change (an *experiment*, below), in one process, taking turns
request by request, which goes first alternating. This two-core machine changes pace by
more than such a change gains from one minute to the next (docs/benchmarks.md), so two
runs minutes apart cannot tell it; requests in turn can. Prints, for each operation, cold
and warm, the median time of a request each way, their ratio, and the round trips each way.

    python -m bench.compare.ab union --only "board page" "pin page" --cold
    python -m bench.compare.ab csp --warm --requests 500
    python -m bench.compare.ab feed --only "home feed"
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.compare.profile import getter, measurements, round_trips  # noqa: E402


@contextmanager
def one_statement_per_select() -> Iterator[None]:
    """Before a host's SELECTs of objects were joined in one UNION ALL."""
    with mock.patch("shardstore.store.fewest_statements", lambda s, _: (list(s), lambda f: f)):
        yield


@contextmanager
def one_round_trip_per_statement() -> Iterator[None]:
    """Before a step's statements went to a host in one round trip."""
    from pinboard.data_plane import cached_store

    dialects = {id(b.dialect): b.dialect for b in cached_store().store.backends().values()}
    kept = {key: dialect.several_statements for key, dialect in dialects.items()}
    for dialect in dialects.values():
        object.__setattr__(dialect, "several_statements", False)  # a frozen dataclass
    try:
        yield
    finally:
        for key, dialect in dialects.items():
            object.__setattr__(dialect, "several_statements", kept[key])


@contextmanager
def boards_after_pins() -> Iterator[None]:
    """Before a feed's entries named their pins' boards: a step for the boards after the
    pins' step."""
    from social.feeds import HomeFeeds

    page = HomeFeeds.page

    def unnamed(self: HomeFeeds, *args: Any, **kwargs: Any) -> Any:
        return page(self, *args, **kwargs)._replace(boards={})

    with mock.patch.object(HomeFeeds, "page", unnamed):
        yield


def django_csp_middleware(middleware: list[str]) -> list[str]:
    """Before the policy was built once: django-csp's middleware, which builds it (and an
    empty report-only one) on every response."""
    ours = "pinboard.content_policy.ContentSecurityPolicyMiddleware"
    return [("csp.middleware.CSPMiddleware" if name == ours else name) for name in middleware]


@dataclass(frozen=True)
class Experiment:
    """The way before a change: ``patch`` entered around each of its requests, and
    ``middleware`` making its ``MIDDLEWARE`` from the site's."""

    patch: Callable[[], AbstractContextManager[object]] = nullcontext
    middleware: Callable[[list[str]], list[str]] | None = None


EXPERIMENTS = {
    "union": Experiment(patch=one_statement_per_select),
    "batch": Experiment(patch=one_round_trip_per_statement),
    "csp": Experiment(middleware=django_csp_middleware),
    "feed": Experiment(patch=boards_after_pins),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiment", choices=sorted(EXPERIMENTS))
    parser.add_argument("--pins", type=int, default=2_500)
    parser.add_argument("--pinners", type=int, default=1_000)
    parser.add_argument("--requests", type=int, default=300, help="per operation, state, way")
    parser.add_argument("--only", nargs="*", help="operations (default: all)")
    state = parser.add_mutually_exclusive_group()
    state.add_argument("--cold", action="store_true", help="cold only")
    state.add_argument("--warm", action="store_true", help="warm only")
    parser.add_argument("--seed", type=int, default=2012)
    args = parser.parse_args()
    experiment = EXPERIMENTS[args.experiment]
    print(f"{args.experiment}: now against before the change, {args.requests} requests each")
    made = functools.cache(lambda: clients(experiment))  # at the first, once the site is set up
    with ExitStack() as servers:
        for op, lines, flush in measurements(servers, args):
            sides = in_turn(lines, *made(), experiment.patch, flush)
            state = "warm" if flush is None else "cold"
            print(f"  {op.name}, {state}: {report(sides)}")
    return 0


def clients(experiment: Experiment) -> tuple[Callable[[str], None], Callable[[str], None]]:
    """A GET through the site as it is, and one through the site as ``experiment`` makes it."""
    from django.conf import settings
    from django.test import Client, override_settings

    now = Client(HTTP_HOST="127.0.0.1")
    before = Client(HTTP_HOST="127.0.0.1")
    if experiment.middleware is not None:
        with override_settings(MIDDLEWARE=experiment.middleware(list(settings.MIDDLEWARE))):
            before.handler.load_middleware()  # the chain is built once, from these settings
    return getter(now), getter(before)


def in_turn(
    lines: list[str],
    now: Callable[[str], None],
    before: Callable[[str], None],
    patch: Callable[[], AbstractContextManager[object]],
    flush: Callable[[], None] | None,
) -> dict[str, dict[str, list[float]]]:
    """Each line served both ways (``flush`` first, untimed, for a cold request), which way
    goes first alternating: each way's times (ms) and round trips per request."""
    ways: dict[str, tuple[Callable[[str], None], Callable[[], AbstractContextManager[object]]]] = {
        "now": (now, nullcontext),
        "before": (before, patch),
    }
    for get, context in ways.values():  # first-use costs (imports, connections), untimed
        with context():
            for line in lines if flush is None else lines[:1]:  # warm: every line cached
                get(line)
    found: dict[str, dict[str, list[float]]] = {way: {"ms": []} for way in ways}
    for n, line in enumerate(lines):
        for way in ("now", "before") if n % 2 else ("before", "now"):
            get, context = ways[way]
            if flush is not None:
                flush()
            with context():
                trips = round_trips()
                started = time.perf_counter()
                get(line)
                took = time.perf_counter() - started
                after = round_trips()
            found[way]["ms"].append(took * 1000)
            for kind, count in after.items():
                found[way].setdefault(kind, []).append(count - trips[kind])
    return found


def report(sides: dict[str, dict[str, Any]]) -> str:
    now, before = (statistics.median(sides[way]["ms"]) for way in ("now", "before"))
    trips = {
        way: ", ".join(
            f"{kind} {statistics.fmean(counts):.1f}"
            for kind, counts in sides[way].items()
            if kind != "ms"
        )
        for way in sides
    }
    return (
        f"{now:.2f} ms now, {before:.2f} ms before ({now / before:.2f}x);"
        f" round trips now {trips['now']}; before {trips['before']}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
