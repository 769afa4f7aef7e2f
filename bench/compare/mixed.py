"""A mixed workload in the proportions of a pin site, LinkBench-style: 90% reads, 10% writes,
each operation drawn at random by weight, from 16 closed-loop clients, with percentiles per
operation; and the RSS of the server's workers over the run (do they grow without bound?).

Writes are the API's: like, save (repin) to one of the viewer's boards, comment, follow. Each
client signs in as a random viewer per request (the same API tokens on both builds). On
pinboard, a save fans out to the board's followers in the request (no Celery worker runs in
the benchmark, so tasks run eagerly): its figures include work that production hands to a
worker.
"""

from __future__ import annotations

import http.client
import json
import random
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from toolkit.site_processes import GunicornSite

from .dataset import Dataset
from .load import rss_mb, tree
from .operations import OPERATIONS, Tokens
from .probe import BEHIND_TLS, percentile

#: Operation -> weight (percent). Reads first; the writes add up to 10.
MIX = {
    "pin": 20, "board pins": 15, "home feed": 20, "user": 8, "user boards": 7,
    "pin comments": 5, "pin likes": 3, "profile page": 4, "board page": 4, "pin page": 4,
    "like": 4, "save": 2, "comment": 2, "follow": 2,
}  # fmt: skip
WRITES = ("like", "save", "comment", "follow")


class Requests:
    """Random requests of the mix, as (operation, method, path, token, JSON body)."""

    def __init__(self, data: Dataset, tokens: Tokens, rng: random.Random) -> None:
        self.rng, self.data, self.tokens = rng, data, tokens
        self.reads = {op.name: op for op in OPERATIONS}
        self.viewers = list(tokens)
        self.boards_of: dict[int, list[int]] = defaultdict(list)
        for board, owner in data.owner_of.items():
            self.boards_of[owner].append(board)
        self.names, self.weights = list(MIX), list(MIX.values())
        self.population = {"pinner": list(data.usernames), "board": list(data.owner_of)}

    def next(self) -> tuple[str, str, str, str, bytes | None]:
        rng, data = self.rng, self.data
        name = rng.choices(self.names, self.weights)[0]
        viewer = rng.choice(self.viewers)
        token = self.tokens[viewer]
        pin = rng.choice(data.pins)
        if name == "like":
            return name, "PUT", f"/api/v1/pins/{pin}/like", token, None
        if name == "save":
            body = {"board_id": str(rng.choice(self.boards_of[viewer]))}
            return name, "POST", f"/api/v1/pins/{pin}/save", token, json.dumps(body).encode()
        if name == "comment":
            body = {"text": f"Nice one {rng.randrange(10**6)}"}
            return name, "POST", f"/api/v1/pins/{pin}/comments", token, json.dumps(body).encode()
        if name == "follow":
            other = rng.choice([u for u in rng.sample(self.viewers, 2) if u != viewer])
            return name, "PUT", f"/api/v1/users/{other}/follow", token, None
        op = self.reads[name]
        if op.entity == "viewer":
            entity = viewer
        elif op.entity == "pin":
            entity = pin
        else:
            entity = rng.choice(self.population[op.entity])
        path, _, _ = op.path(data, entity, self.tokens).partition("\t")
        return name, "GET", path, token if op.entity == "viewer" else "", None


def drive(port: int, requests: Requests, *, seconds: float, clients: int) -> dict[str, Any]:
    """Run the mix against 127.0.0.1:``port``: per operation, count, errors, p50/p95/p99."""
    deadline = time.monotonic() + seconds
    times: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    draw = threading.Lock()

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while time.monotonic() < deadline:
            with draw:  # one random stream, drawn in turn
                name, method, path, token, body = requests.next()
            headers = dict(BEHIND_TLS)
            if token:
                headers["Authorization"] = f"Token {token}"
            if body is not None:
                headers["Content-Type"] = "application/json"
            start = time.perf_counter()
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                response.read()
                ok = response.status < 300
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                ok = False
            elapsed = (time.perf_counter() - start) * 1000
            times[name].append(elapsed)
            if not ok:
                errors[name] += 1
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {
        name: {
            "requests": len(values),
            "errors": errors[name],
            "p50_ms": round(statistics.median(values), 2),
            "p95_ms": round(percentile(values, 0.95), 2),
            "p99_ms": round(percentile(values, 0.99), 2),
        }
        for name, values in sorted(times.items())
    }


def run(
    servers: Mapping[str, GunicornSite], data: Dataset, tokens: Tokens, *, minutes: float,
    clients: int, seed: int,
) -> dict[str, Any]:  # fmt: skip
    """The mix on each build: pinboard for ``minutes`` with its workers' RSS sampled each
    minute, the ORM builds for up to 3 minutes each (their percentiles; their RSS is not
    the question here), from ``clients`` closed-loop clients. The cached ORM build goes
    before the plain one: both write to the same database, and only the cached build's own
    writes tell its cache what changed."""
    found: dict[str, Any] = {}
    short = min(minutes, 3)
    for side, length in (("pinboard", minutes), ("cached", short), ("orm", short)):
        if side not in servers:
            continue
        server = servers[side]
        assert server.pid is not None
        workers = tree(server.pid)[1:]
        requests = Requests(data, tokens, random.Random(seed))
        rss: list[dict[str, float]] = []
        started = time.monotonic()
        with ThreadPoolExecutor(1) as pool:
            running = pool.submit(
                drive, server.port, requests, seconds=length * 60, clients=clients
            )
            while not running.done():
                wait([running], timeout=min(60, length * 60))
                minute = (time.monotonic() - started) / 60
                rss.append({"minute": round(minute, 2), "mb": sum(rss_mb(p) for p in workers)})
            result = running.result()
        seconds = time.monotonic() - started
        total = sum(op["requests"] for op in result.values())
        found[side] = {
            "minutes": length,
            "requests_per_second": round(total / seconds, 1),
            "operations": result,
            "worker_rss": rss,
            "workers_restarted": tree(server.pid)[1:] != workers,
        }
    return found
