"""Throughput of shardstore on each backend, and against raw mysqlclient on MySQL.

Single-threaded, on shard 3 of an 8-shard one-host topology made by ``init_shards``:

* create       ``store.objects("pin").create(3, {...})``
* get_many(50) ``store.objects("pin").get_many(<50 pin IDs of shard 3>)``
* page(50)     ``store.mapping("board_has_pins").page(board, limit=50)``, 300 pins

On MySQL each is set against the same work written by hand on one reused
mysqlclient connection, on the same tables of the same server (``INSERT INTO
db00003.pins``; ``SELECT local_id, data ... WHERE local_id IN (...)`` plus
``json.loads`` of each row; ``SELECT to_id, sequence ... LIMIT 51``), with the
ratio shardstore/raw (acceptance: >= 0.7 for get_many and page). Short rounds
alternate the two sides and medians are reported, so noise favours neither.

    make bench     # = python bench/store_throughput.py [--backend sqlite|mysql|all] [--seconds 3]
    python bench/store_throughput.py --backend mysql --mysql-address mysql://root@127.0.0.1:3306

Without ``--mysql-address`` a private MariaDB is started through toolkit/servers/
and stopped at the end; under ``all`` mysql is skipped if it cannot run here.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from urllib.parse import unquote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pinboard.catalog import CATALOG
from shardstore import Store, Topology, compose, decompose, init_shards

SHARD = 3
SHARDS = 8
BATCH = 50
BOARD_PINS = 300
SLICE = 0.2  # seconds per round and side


def pin_data(n: int) -> dict:
    """A pin's JSON, about 200 bytes."""
    return {"title": f"Pin number {n}", "description": "A fine picture worth keeping, saved.",
            "image": f"https://img.example.com/originals/{n:08x}.jpg",
            "link": "https://example.com/article", "width": 736, "height": 1104}  # fmt: skip


def timed(op: Callable[[], object], seconds: float) -> float:
    """Operations per second of ``op`` called in a loop for about ``seconds``."""
    count, start = 0, time.perf_counter()
    deadline = start + seconds
    while True:
        op()
        count += 1
        now = time.perf_counter()
        if now >= deadline:
            return count / (now - start)


def measure(sides: list[Callable[[], object]], seconds: float) -> list[float | None]:
    """[ops/s, raw ops/s, ratio]: medians over short rounds alternating the sides.

    The ratio is the median of each round's shardstore/raw, so a burst of noise
    hits both sides of a round alike. With one side, raw and ratio are None.
    """
    for op in sides:  # warm up connections, caches and the buffer pool
        timed(op, 0.2)
    rounds: list[list[float]] = [[] for _ in sides]
    for r in range(max(3, round(seconds / SLICE))):
        for i in range(len(sides))[:: 1 if r % 2 == 0 else -1]:
            rounds[i].append(timed(sides[i], SLICE))
    if len(sides) == 1:
        return [statistics.median(rounds[0]), None, None]
    ratios = [a / b for a, b in zip(*rounds, strict=True)]
    return [*map(statistics.median, rounds), statistics.median(ratios)]


def shardstore_ops(store: Store) -> tuple[dict[str, Callable[[], object]], list[int], int]:
    """Seed shard 3; the shardstore operations to time, the local ids read, and the board."""
    pins = store.objects("pin")
    ids = [pins.create(SHARD, pin_data(n)) for n in range(BOARD_PINS)]
    board = store.objects("board").create(SHARD, {"name": "Benchmark board"})
    boards = store.mapping("board_has_pins")
    for sequence, pin in enumerate(ids):
        boards.add(board, pin, sequence=sequence)
    some = ids[:BATCH]
    counter = iter(range(10**9))
    assert len(pins.get_many(some)) == BATCH and len(boards.page(board, limit=BATCH).ids) == BATCH
    ops = {
        "create": lambda: pins.create(SHARD, pin_data(next(counter))),
        "get_many(50)": lambda: pins.get_many(some),
        "page(50)": lambda: boards.page(board, limit=BATCH),
    }
    return ops, [decompose(pin).local_id for pin in some], board


def raw_ops(connection, local_ids: list[int], board: int) -> dict[str, Callable[[], object]]:
    """The same work, written by hand on one reused mysqlclient connection."""
    cursor = connection.cursor()
    db = f"db{SHARD:05d}"
    insert = f"INSERT INTO {db}.pins (data) VALUES (%s)"
    select = f"SELECT local_id, data FROM {db}.pins WHERE local_id IN ({','.join(['%s'] * BATCH)})"
    page = (
        f"SELECT to_id, sequence FROM {db}.board_has_pins WHERE from_id=%s"
        f" ORDER BY sequence DESC, to_id DESC LIMIT {BATCH + 1}"
    )
    counter = iter(range(10**9))

    def create() -> int:
        cursor.execute(insert, (json.dumps(pin_data(next(counter))),))
        return compose(SHARD, 1, cursor.lastrowid)

    def get_many() -> list:
        cursor.execute(select, local_ids)
        return [json.loads(data) for _, data in cursor.fetchall()]

    def page_of() -> list:
        cursor.execute(page, (board,))
        return [to_id for to_id, _ in cursor.fetchall()]

    assert len(get_many()) == BATCH and len(page_of()) == BATCH + 1
    return {"create": create, "get_many(50)": get_many, "page(50)": page_of}


def bench(backend: str, address: str, seconds: float) -> list[tuple]:
    with closing(
        Store(Topology.single_host(address, shard_count=SHARDS), catalog=CATALOG)
    ) as store:
        init_shards(store)
        ops, local_ids, board = shardstore_ops(store)
        if backend == "sqlite":
            return [(backend, name, *measure([op], seconds)) for name, op in ops.items()]
        import MySQLdb

        url = urlsplit(address)
        with closing(MySQLdb.connect(
            host=url.hostname, port=url.port or 3306, user=unquote(url.username or "root"),
            password=unquote(url.password or ""), charset="utf8mb4", autocommit=True,
        )) as connection:  # fmt: skip
            raw = raw_ops(connection, local_ids, board)
            return [(backend, name, *measure([op, raw[name]], seconds)) for name, op in ops.items()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "mysql", "all"], default="all")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement and side")
    parser.add_argument("--mysql-address", help="mysql://root@127.0.0.1:PORT (default: start one)")
    args = parser.parse_args()

    results: list[tuple] = []
    if args.backend in ("sqlite", "all"):
        with tempfile.TemporaryDirectory(prefix="shardstore-bench-") as directory:
            results += bench("sqlite", f"sqlite://{directory}", args.seconds)
    if args.backend in ("mysql", "all"):
        from toolkit.servers.mariadb import MariaDBServer

        missing = None if importlib.util.find_spec("MySQLdb") else "mysqlclient is not installed"
        if not (missing or args.mysql_address or MariaDBServer.available()):
            missing = MariaDBServer.available().reason
        if missing:
            print(f"mysql: {missing}", file=sys.stderr)
            if args.backend == "mysql":
                return 1
        elif args.mysql_address:
            results += bench("mysql", args.mysql_address, args.seconds)
        else:
            with MariaDBServer() as server:
                results += bench("mysql", f"mysql://root@{server.address}", args.seconds)

    print(f"\n{'backend':<8} {'operation':<13} {'ops/s':>9} {'raw ops/s':>10} {'ratio':>6}")
    for backend, name, rate, raw, ratio in results:
        extra = f" {raw:>10.0f} {ratio:>6.2f}" if raw else ""
        print(f"{backend:<8} {name:<13} {rate:>9.0f}{extra}")
    print(f"\nMedians of alternating {SLICE:g}s rounds, {args.seconds:g}s per operation and side;")
    print("ratio = median of the rounds' shardstore/raw (get_many and page need >= 0.70).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
