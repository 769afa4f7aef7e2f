"""Fan-out of one pin to 100,000 followers through the real Celery tasks, against raw redis-py.

What it does:

1. Starts a private Redis (toolkit/servers/) and, in a temporary directory, a small
   embedded SQLite topology (8 shards; ``PINBOARD_TOPOLOGY`` + ``PINBOARD_VAR_DIR``),
   then ``django.setup()`` with ``pinboard.settings.dev`` (no broker: Celery runs
   tasks eagerly in this process) and builds the data plane with
   ``pinboard.data_plane.build`` + ``use`` on that Redis and local-memory cache pools.
2. Makes the owner, the board and, each round, a fresh pin through the real actions
   (``sign_up``, ``create_board``, ``create_pin`` with a small Pillow image). The
   board gets ``--followers`` followers (default 100,000) written straight into the
   graph with pipelined redis-py commands, with the graph's own key functions and
   ``member()`` padding: ``--board-share`` of them (default 10%) in the board's
   explicit-followers hash ``b:<board>:f``, the rest in the owner's followers zset
   ``u:<owner>:fre``. Every follower is marked active (``seen:<id>``, as
   ``HomeFeeds.mark_seen`` does), since fan-out only reaches active pinners.
3. Times ``pinboard.feeds.tasks.fan_out_pin.delay(pin_id, sequence)``: the real task,
   which streams the board's followers from the graph (``board_followers``, 1,000 at
   a time) and runs one ``fan_out_batch`` per chunk (``HomeFeeds.push``: one Lua
   script call that claims the batch, then LPUSH + LTRIM per active follower).
   ``create_pin``'s own ``publish`` is held back while the pin is made, so that the
   timed call is the pin's one and only fan-out. Feed inserts/s = followers / elapsed.
4. In the same run, on the same Redis, the raw baseline: redis-py pipelines
   (``transaction=False``) of LPUSH + LTRIM into the same number of lists
   (``rawfeed:<id>``, entries of the same shape), one pipeline per 1,000 lists.
5. ``--rounds`` rounds of each (default 3) after one untimed warm-up of each, the
   order alternating per round; prints medians and the median of the per-round
   ratios fan-out/raw (acceptance: >= 0.70). Finally checks that every follower's
   feed holds every fanned-out pin exactly once.

With ``--worker`` the fan-out runs in a real ``celery worker`` process (``--pool=solo``,
or prefork with ``--worker-processes N``) on a Redis broker (database 15 of the same
Redis), and the time is from ``delay()`` until every batch's claim key is in Redis
(a batch's claim and its pushes are one atomic script, so the claim marks it done).

    .venv/bin/python bench/fanout.py                      # about 20 s here (30 s with --worker)
    .venv/bin/python bench/fanout.py --rounds 5 --worker  # through a real worker

The Redis server and the temporary directory are removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from toolkit.servers.redis import RedisServer  # noqa: E402
from toolkit.site_processes import CeleryWorker  # noqa: E402

BATCH = 1000  # lists per raw pipeline (and followers per fan-out batch, tasks.BATCH)
USER_TYPE = 3  # pinboard.catalog: the user type id (follower IDs look like real ones)
SHARDS = 8


def follower_ids(count: int) -> list[int]:
    from shardstore import compose

    return [compose(n % SHARDS, USER_TYPE, 1_000_000 + n) for n in range(count)]


def setup_django(tmp: Path, redis_url: str, broker: str | None) -> None:
    """Environment first, then django.setup(): settings are read once, at import."""
    from shardstore import Topology

    topology = tmp / "topology.json"
    topology.write_text(
        json.dumps(Topology.single_host(f"sqlite://{tmp / 'shards'}", shard_count=SHARDS).as_json())
    )
    os.environ["DJANGO_SETTINGS_MODULE"] = "pinboard.settings.dev"
    os.environ["PINBOARD_VAR_DIR"] = str(tmp / "var")
    os.environ["PINBOARD_TOPOLOGY"] = str(topology)
    os.environ["PINBOARD_REDIS_URL"] = redis_url
    for name in ("PINBOARD_REDIS_TOPOLOGY", "PINBOARD_MEMCACHED", "PINBOARD_BROKER_URL"):
        os.environ.pop(name, None)
    if broker:
        os.environ["PINBOARD_BROKER_URL"] = broker
    import django

    django.setup()


def build_plane(redis_url: str):
    from pinboard.catalog import CACHE_POOLS, CATALOG
    from pinboard.data_plane import topology_from_settings, use
    from pinboard.plane import build
    from shardstore import Store, init_shards
    from shardstore.cache import LocalPool
    from shardstore.redis_shards import RedisTopology

    store = Store(topology_from_settings(), catalog=CATALOG)
    init_shards(store)
    plane = build(
        store, {name: LocalPool(name) for name in CACHE_POOLS}, RedisTopology.single(redis_url)
    )
    use(plane)
    return plane


def write_graph(client, owner: int, board: int, followers: list[int], board_share: float) -> None:
    """Followers straight into the graph (board hash / owner's zset), all marked active."""
    from social.feeds import ACTIVE_SECONDS, seen_key
    from social.graph import board_followers_key, followers_key, member

    in_board = round(len(followers) * board_share)
    score = int(time.time() * 1_000_000)
    for start in range(0, len(followers), BATCH):
        chunk = followers[start : start + BATCH]
        pipe = client.pipeline(transaction=False)
        hash_part = [f for i, f in enumerate(chunk, start) if i < in_board]
        zset_part = [f for i, f in enumerate(chunk, start) if i >= in_board]
        if hash_part:
            pipe.hset(board_followers_key(board), mapping={member(f): score for f in hash_part})
        if zset_part:
            pipe.zadd(followers_key(owner), {member(f): score + i for i, f in enumerate(zset_part)})
        for f in chunk:
            pipe.set(seen_key(f), 1, ex=ACTIVE_SECONDS)
        pipe.execute()


def new_pin(owner: int, board: int, n: int) -> tuple[int, int]:
    """A pin made by the real create_pin, its publish (the fan-out) held back: (id, sequence)."""
    import pinboard.feeds.actions as feed_actions
    from pinboard.pins.actions import create_pin
    from toolkit.images import image_upload

    published: list[tuple[int, int]] = []
    with mock.patch.object(feed_actions, "publish", lambda p, s: published.append((p["id"], s))):
        create_pin(owner, board, image_upload(), f"Fan-out pin {n}")
    assert len(published) == 1
    return published[0]


def expected_batches(plane, owner: int, board: int) -> list[str]:
    """The batch names fan_out_pin gives a pin of this board (as the task names them)."""
    from pinboard.feeds.tasks import batch_name

    chunks = plane.graph.board_followers(board, owner, chunk=BATCH)
    return ["owner", *(batch_name(followers) for followers in chunks)]


def fan_out(plane, owner: int, board: int, n: int, worker: bool) -> tuple[int, float, int]:
    """One timed fan-out of a fresh pin: (pin id, seconds, Redis calls made here)."""
    from pinboard.feeds.tasks import fan_out_pin

    pin_id, sequence = new_pin(owner, board, n)
    claims = []
    if worker:
        instance = next(iter(plane.graph.shards.clients()))
        claims = [f"fanout:{pin_id}:{b}:{instance}" for b in expected_batches(plane, owner, board)]
    client = plane.graph.shards.client_for(owner)
    calls = plane.graph.shards.calls
    start = time.perf_counter()
    fan_out_pin.delay(pin_id, sequence)
    while worker and client.exists(*claims) < len(claims):
        time.sleep(0.002)
    elapsed = time.perf_counter() - start
    return pin_id, elapsed, plane.graph.shards.calls - calls


def raw_push(client, followers: list[int], n: int) -> float:
    """Pipelined LPUSH + LTRIM into one list per follower, 1,000 lists per pipeline."""
    from social.feeds import FEED_LENGTH, entry

    value = entry(4_611_686_018_427_387_904 + n, int(time.time() * 1_000_000))  # a pin-sized ID
    keys = [f"rawfeed:{f}" for f in followers]
    start = time.perf_counter()
    for first in range(0, len(keys), BATCH):
        pipe = client.pipeline(transaction=False)
        for key in keys[first : first + BATCH]:
            pipe.lpush(key, value)
            pipe.ltrim(key, 0, FEED_LENGTH - 1)
        pipe.execute()
    return time.perf_counter() - start


def verify(client, followers: list[int], pins: list[int]) -> tuple[int, int]:
    """(feeds holding every pin exactly once, feeds that do not)."""
    from social.feeds import feed_key, parse_entry

    good = bad = 0
    want = sorted(pins)
    for first in range(0, len(followers), BATCH):
        pipe = client.pipeline(transaction=False)
        for f in followers[first : first + BATCH]:
            pipe.lrange(feed_key(f), 0, -1)
        for raw in pipe.execute():
            got = sorted(parse_entry(r)[1] for r in raw)
            if got == want:
                good += 1
            else:
                bad += 1
    return good, bad


def start_worker(tmp: Path, broker: str, processes: int) -> CeleryWorker:
    """A Celery worker (solo, or a prefork pool of ``processes``) on ``broker``."""
    env = {**os.environ, "PINBOARD_BROKER_URL": broker}
    concurrency = None if processes <= 1 else processes
    return CeleryWorker(
        env, tmp / "worker.log", concurrency=concurrency, log_level="warning"
    ).start()


def run(args: argparse.Namespace, redis: RedisServer, tmp: Path) -> int:
    broker = f"redis://{redis.host}:{redis.port}/15" if args.worker else None
    setup_django(tmp, redis.url, broker)
    plane = build_plane(redis.url)
    from django.conf import settings

    from pinboard.boards.actions import create_board
    from pinboard.users.actions import sign_up

    assert bool(args.worker) != settings.CELERY_TASK_ALWAYS_EAGER
    client = plane.graph.shards.client_for(0)
    owner = sign_up("fanout_owner", "fanout_owner@example.com", "plum-orchard-42")
    board = create_board(owner["id"], "Fan-out board")
    followers = follower_ids(args.followers)
    t = time.perf_counter()
    write_graph(client, owner["id"], board["id"], followers, args.board_share)
    count = plane.graph.board_follower_count(board["id"], owner["id"])
    assert count == args.followers, count
    print(
        f"graph: board {board['id']} of pinner {owner['id']} has {count:,} followers "
        f"({args.board_share:.0%} in the board hash), written in {time.perf_counter() - t:.1f}s",
        flush=True,
    )

    worker = None
    if args.worker:
        worker = start_worker(tmp, broker, args.worker_processes)
    try:
        pins: list[int] = []
        # Warm-up (untimed): the script is loaded, connections made, the worker started.
        pin_id, seconds, _ = fan_out(plane, owner["id"], board["id"], 0, bool(worker))
        pins.append(pin_id)
        raw_push(client, followers, 0)
        print(f"warm-up: fan-out {seconds:.2f}s", flush=True)
        fan, raw, calls = [], [], []
        for r in range(1, args.rounds + 1):
            order = ("fan", "raw") if r % 2 else ("raw", "fan")
            for side in order:
                if side == "fan":
                    pin_id, seconds, n_calls = fan_out(
                        plane, owner["id"], board["id"], r, bool(worker)
                    )
                    pins.append(pin_id)
                    fan.append(seconds)
                    calls.append(n_calls)
                else:
                    raw.append(raw_push(client, followers, r))
            print(
                f"round {r}: fan-out {fan[-1]:.3f}s  raw {raw[-1]:.3f}s  "
                f"ratio {raw[-1] / fan[-1]:.2f}",
                flush=True,
            )
    finally:
        if worker is not None:
            worker.stop()

    good, bad = verify(client, followers, pins)
    n = args.followers
    ratios = [r / f for f, r in zip(fan, raw, strict=True)]
    mode = (
        f"real worker ({'solo' if args.worker_processes <= 1 else f'prefork x{args.worker_processes}'})"
        if args.worker
        else "eager, in-process"
    )
    print()
    print(f"{'side':<34} {'seconds':>8} {'inserts/s':>10} {'Redis calls':>12}")
    print(
        f"{'fan_out_pin (' + mode + ')':<34} {statistics.median(fan):>8.3f} "
        f"{n / statistics.median(fan):>10,.0f} {statistics.median(calls):>12.0f}"
        + ("" if not args.worker else "  (this process)")
    )
    print(
        f"{'raw pipelined LPUSH+LTRIM':<34} {statistics.median(raw):>8.3f} "
        f"{n / statistics.median(raw):>10,.0f} {-(-n // BATCH):>12}"
    )
    print(f"\nratio fan-out/raw (median of {args.rounds} rounds' ratios): {statistics.median(ratios):.2f}"
          f"   (acceptance: >= 0.70)")  # fmt: skip
    print(
        f"{n:,} followers, {args.rounds} alternating rounds after one warm-up; "
        f"Redis {redis.address}, {os.cpu_count()} CPUs."
    )
    print(f"check: {good:,} feeds hold each of the {len(pins)} pins exactly once; {bad:,} do not.")
    plane.close()
    return 0 if bad == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--followers", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds of each side")
    parser.add_argument(
        "--board-share", type=float, default=0.1,
        help="share of followers that follow the board explicitly (the rest follow its owner)",
    )  # fmt: skip
    parser.add_argument("--worker", action="store_true", help="fan out in a real Celery worker")
    parser.add_argument("--worker-processes", type=int, default=1)
    args = parser.parse_args()
    if not RedisServer.available():
        print(RedisServer.available().reason, file=sys.stderr)
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="pinboard-bench-fanout-"))
    redis = RedisServer()
    try:
        redis.start()
        return run(args, redis, tmp)
    finally:
        redis.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
