"""Warm home-feed page latency (p50, p99) and its cost: SQL, Redis and memcached calls per page.

What it does:

1. Starts a private Redis and a private memcached (toolkit/servers/) and, in a
   temporary directory, a small embedded SQLite topology (8 shards;
   ``PINBOARD_TOPOLOGY`` + ``PINBOARD_VAR_DIR``), then ``django.setup()`` (settings
   ``pinboard.settings.prod`` by default: DEBUG off; ``--settings
   pinboard.settings.dev`` for DEBUG on) with no broker, so Celery runs the
   fan-out eagerly here. The data plane is built with ``pinboard.data_plane.build`` +
   ``use``: the shards behind ``MemcachePool``s (users, boards, pins, lists) on the
   memcached, the follower graph and home feeds on the Redis.
2. Through the real actions: a reader and ``--owners`` pinners with a board each;
   the reader follows them (``follow_user``) and has visited (``mark_seen``), then
   the owners post ``--pins`` pins in turn (``create_pin`` with a small Pillow
   image), each fanned out by the real task into the reader's home feed.
3. Logs the reader in (``POST /login/``) on a Django test client and makes an API
   token (``issue_token``), then requests, warm (after untimed warm-up requests):
   ``/`` (the home page, the first 50 pins), ``/?cursor=...`` (its second page, as
   endless scroll asks for it), ``/api/v1/feed`` and ``/api/v1/feed?cursor=...``,
   ``--requests`` times each, in rounds of 100 that alternate the order of the
   pages. Each request is timed (wall clock around ``Client.get``) and counted:
   SQL with the store's ``count_queries()``, Redis calls as the delta of
   ``graph.shards.calls``, memcached calls as the delta of the pools'
   ``stats.calls``. Prints p50, p99 and the counts per page (acceptance: warm SQL
   per page 0), and, for reference, what one cold request costs (pools emptied).

    .venv/bin/python bench/feed.py                    # under two minutes here
    .venv/bin/python bench/feed.py --requests 3000 --settings pinboard.settings.dev

The servers and the temporary directory are removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from toolkit.servers.memcached import MemcachedServer  # noqa: E402
from toolkit.servers.redis import RedisServer  # noqa: E402

SHARDS = 8
ROUND = 100  # requests per page and round


def setup_django(tmp: Path, redis_url: str, memcached: str, settings_module: str) -> None:
    """Environment first, then django.setup(): settings are read once, at import."""
    from shardstore import Topology

    topology = tmp / "topology.json"
    topology.write_text(
        json.dumps(Topology.single_host(f"sqlite://{tmp / 'shards'}", shard_count=SHARDS).as_json())
    )
    os.environ["DJANGO_SETTINGS_MODULE"] = settings_module
    os.environ["PINBOARD_VAR_DIR"] = str(tmp / "var")
    os.environ["PINBOARD_TOPOLOGY"] = str(topology)
    os.environ["PINBOARD_REDIS_URL"] = redis_url
    os.environ["PINBOARD_MEMCACHED"] = memcached
    os.environ["PINBOARD_ALLOWED_HOSTS"] = "testserver,127.0.0.1,localhost"  # the test client's
    os.environ.setdefault("PINBOARD_SECRET_KEY", secrets.token_urlsafe(48))  # prod needs one
    for name in ("PINBOARD_REDIS_TOPOLOGY", "PINBOARD_BROKER_URL"):
        os.environ.pop(name, None)
    import django

    django.setup()


def build_plane(redis_url: str, memcached: str):
    from pinboard.catalog import CACHE_POOLS, CATALOG
    from pinboard.data_plane import topology_from_settings, use
    from pinboard.plane import build
    from shardstore import Store, init_shards
    from shardstore.cache import MemcachePool
    from shardstore.redis_shards import RedisTopology

    store = Store(topology_from_settings(), catalog=CATALOG)
    init_shards(store)
    pools = {name: MemcachePool(name, [memcached]) for name in CACHE_POOLS}
    plane = build(store, pools, RedisTopology.single(redis_url))
    use(plane)
    return plane


def make_feed(plane, owners: int, pins: int) -> dict:
    """A reader whose home feed has ``pins`` pins, all made and fanned out by the real actions."""
    from pinboard.boards.actions import create_board
    from pinboard.follows.actions import follow_user
    from pinboard.pins.actions import create_pin
    from pinboard.users.actions import sign_up
    from toolkit.images import image_upload

    reader = sign_up("feed_reader", "feed_reader@example.com", "plum-orchard-42")
    posters = [
        sign_up(f"poster_{n}", f"poster_{n}@example.com", "plum-orchard-42") for n in range(owners)
    ]
    boards = [create_board(p["id"], f"Board of poster {n}") for n, p in enumerate(posters)]
    for poster in posters:
        follow_user(reader["id"], poster["id"])
    plane.feeds.mark_seen(reader["id"])  # an active pinner: fan-out reaches them
    for n in range(pins):
        poster, board = posters[n % owners], boards[n % owners]
        create_pin(
            poster["id"], board["id"], image_upload(), f"Feed pin {n}", f"https://example.com/{n}"
        )
    return reader


def counted_get(plane, client, url: str, headers: dict) -> tuple[float, int, int, Counter]:
    """One GET: (seconds, SQL, Redis calls, memcached calls by pool)."""
    pools = plane.store.pools
    redis_before = plane.graph.shards.calls
    mc_before = {name: pool.stats.calls for name, pool in pools.items()}
    with plane.store.count_queries() as queries:
        start = time.perf_counter()
        response = client.get(url, headers=headers)
        seconds = time.perf_counter() - start
    assert response.status_code == 200, (url, response.status_code, response.content[:300])
    mc = Counter({name: pool.stats.calls - mc_before[name] for name, pool in pools.items()})
    return seconds, queries.count, plane.graph.shards.calls - redis_before, mc


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def run(args: argparse.Namespace, redis: RedisServer, memcached: MemcachedServer, tmp: Path) -> int:
    setup_django(tmp, redis.url, memcached.address, args.settings)
    plane = build_plane(redis.url, memcached.address)
    from django.conf import settings
    from django.test import Client

    from pinboard.users.tokens import issue_token

    assert settings.CELERY_TASK_ALWAYS_EAGER
    start = time.perf_counter()
    reader = make_feed(plane, args.owners, args.pins)
    feed = plane.feeds.entries(reader["id"])
    assert len(feed) == min(args.pins, plane.feeds.length), len(feed)
    print(
        f"feed: {len(feed)} pins from {args.owners} followed pinners, made through the actions "
        f"in {time.perf_counter() - start:.1f}s",
        flush=True,
    )

    client = Client(headers={"X-Forwarded-Proto": "https"})  # as behind the load balancer
    response = client.post("/login/", {"login": reader["username"], "password": "plum-orchard-42"})
    assert response.status_code == 302, response.content[:300]
    api = {"Authorization": f"Token {issue_token(reader)['token']}"}
    page_cursor = plane.feeds.page(reader["id"], limit=50).cursor
    first = client.get("/api/v1/feed", headers=api).json()
    assert len(first["items"]) == 50 and first["next"], first
    pages = {
        "/": ("/", {}),
        "/?cursor= (page 2)": (f"/?cursor={page_cursor}", {}),
        "/api/v1/feed": ("/api/v1/feed", api),
        "/api/v1/feed?cursor= (page 2)": (f"/api/v1/feed?cursor={first['next']}", api),
    }
    home = client.get("/")
    assert home.content.count(b'class="pin"') == 50, "the home page should show 50 pins"

    cold = {}
    for name, (url, headers) in pages.items():
        for pool in plane.store.pools.values():
            pool.clear()  # one memcached: this empties every pool
        _, sql, redis_calls, mc = counted_get(plane, client, url, headers)
        cold[name] = (sql, redis_calls, sum(mc.values()))
    for _ in range(20):  # warm-up: caches filled, code paths and connections hot
        for url, headers in pages.values():
            counted_get(plane, client, url, headers)

    results: dict[str, list[tuple[float, int, int, Counter]]] = {name: [] for name in pages}
    names = list(pages)
    rounds = max(1, -(-args.requests // ROUND))
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            url, headers = pages[name]
            for _ in range(min(ROUND, args.requests - r * ROUND)):
                results[name].append(counted_get(plane, client, url, headers))

    print()
    print(
        f"{'page (warm)':<30} {'n':>5} {'p50 ms':>7} {'p99 ms':>7} {'mean ms':>8} "
        f"{'SQL':>4} {'Redis':>6} {'memcached':>10}  memcached calls by pool"
    )
    all_sql = Counter()
    for name, rows in results.items():
        ms = [row[0] * 1000 for row in rows]
        sql = Counter(row[1] for row in rows)
        all_sql.update(sql)
        redis_calls = Counter(row[2] for row in rows)
        mc_total = Counter(sum(row[3].values()) for row in rows)
        by_pool = Counter()
        for row in rows:
            by_pool.update(row[3])
        per_pool = ", ".join(
            f"{pool} {count / len(rows):g}" for pool, count in sorted(by_pool.items()) if count
        )
        print(
            f"{name:<30} {len(rows):>5} {statistics.median(ms):>7.2f} {percentile(ms, 99):>7.2f} "
            f"{statistics.fmean(ms):>8.2f} {spread(sql):>4} {spread(redis_calls):>6} "
            f"{spread(mc_total):>10}  {per_pool}"
        )
    print("\nfor reference, one cold request (every pool emptied first):")
    print(f"{'page (cold)':<30} {'SQL':>4} {'Redis':>6} {'memcached':>10}")
    for name, (sql, redis_calls, mc) in cold.items():
        print(f"{name:<30} {sql:>4} {redis_calls:>6} {mc:>10}")
    print(
        f"\nSettings {args.settings} (DEBUG {settings.DEBUG}); Django test client in this process; "
        f"rounds of {ROUND} requests per page, alternating the order of the pages; "
        f"Redis {redis.address}, memcached {memcached.address}, {os.cpu_count()} CPUs."
    )
    warm_sql = sum(count * n for count, n in all_sql.items())
    print(f"warm SQL queries over all {sum(all_sql.values())} requests: {warm_sql} (expected 0)")
    plane.close()
    return 0 if warm_sql == 0 else 1


def spread(counts: Counter) -> str:
    """The count if every request cost the same, else "min-max"."""
    low, high = min(counts), max(counts)
    return str(low) if low == high else f"{low}-{high}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1000, help="timed requests per page")
    parser.add_argument("--pins", type=int, default=300, help="pins in the reader's home feed")
    parser.add_argument("--owners", type=int, default=3, help="followed pinners who post them")
    parser.add_argument("--settings", default="pinboard.settings.prod")
    args = parser.parse_args()
    for server in (RedisServer, MemcachedServer):
        if not server.available():
            print(server.available().reason, file=sys.stderr)
            return 1
    tmp = Path(tempfile.mkdtemp(prefix="pinboard-bench-feed-"))
    redis = memcached = None
    try:
        redis = RedisServer().start()
        memcached = MemcachedServer().start()
        return run(args, redis, memcached, tmp)
    finally:
        for server in (memcached, redis):
            if server is not None:
                server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
