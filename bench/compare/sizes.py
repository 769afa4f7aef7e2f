"""p50 against data size, measured so that the machine's own drift cancels out.

The data set grows in place (10k, then 100k, then 1M pins), so its sizes are measured
minutes apart, and a shared two-core machine changes speed by more than the 10% the
target allows within such minutes (a fixed CPU loop here takes 20 ms in one second and
31 ms a few seconds later). So a copy of the first size, the *reference*, is served all
along on servers of its own (MariaDB, memcached, Redis, both builds under gunicorn), and
at every size each path goes to the growing data set and to the reference in turn: the
growing data set's p50 over the reference's, taken in the same minutes, is what grows
with the data. At the first size the two hold the same data, and their ratio is the
method's own noise. The probes' pages hold the same content at every size
(bench/compare/dataset.py), and the copy has the same IDs and API tokens, so one list of
paths drives both.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from . import probe
from .stack import Stack, start_stack


@dataclass(frozen=True)
class Server:
    """One build, and how to empty its cache pools."""

    port: int
    clear_caches: Callable[[], None]


def copy_of(stack: Stack, servers: ExitStack) -> Stack:
    """A second stack (stopped when ``servers`` closes) holding a copy of every database of
    ``stack`` as it is now, its Redis follower graph and feeds rebuilt from them."""
    tmp = stack.tmp / "reference"
    tmp.mkdir()
    shards, settings = stack.topology.shard_count, stack.pinboard_env["DJANGO_SETTINGS_MODULE"]
    copy = start_stack(tmp, servers, shards=shards, settings=settings)
    stack.copy_databases(copy)
    copy.rebuild_redis()
    copy.settle()
    return copy


def measure(
    lines: list[str], here: Server, reference: Server | None, *, rounds: int
) -> dict[str, Any]:
    """p50 and p99 of ``lines`` on ``here``, warm and cold (caches emptied before each
    request), and under "reference" the same on the reference, request by request in
    turn: a path on one, then on the other (which goes first alternates), so the machine's
    changes of pace, which last seconds, fall on both alike.

    Every path is asked for once before a warm pass, so a warm request finds its values
    cached (the paths repeat entities: a first visit would be a cold one)."""
    servers = {"here": here} | ({"reference": reference} if reference else {})
    taken: dict[str, dict[str, list[float]]] = {name: {"warm": [], "cold": []} for name in servers}
    clients = {name: probe.Client(server.port) for name, server in servers.items()}
    try:
        for _ in range(rounds):
            for client in clients.values():
                for line in lines:  # fills the caches: every path once
                    probe.timed(client, line)
            for mode in ("warm", "cold"):
                for n, line in enumerate(lines):
                    for name in list(servers)[:: -1 if n % 2 else 1]:
                        if mode == "cold":
                            servers[name].clear_caches()
                        taken[name][mode].append(probe.timed(clients[name], line))
    finally:
        for client in clients.values():
            client.close()
    summaries = {
        name: {mode: probe.summary(t) for mode, t in modes.items()} for name, modes in taken.items()
    }
    return summaries["here"] | ({"reference": summaries["reference"]} if reference else {})


def growth(results: dict[str, Any], op: str, side: str, mode: str) -> float | None:
    """p50 at the largest size over the reference's (the first size) in the same minutes;
    None for a run of one size, which has no reference."""
    largest = results["sizes"][max(results["sizes"], key=int)][op][side]
    if "reference" not in largest:
        return None
    return float(largest[mode]["p50"] / largest["reference"][mode]["p50"])
