"""Throughput of shardstore on each backend, and against raw mysqlclient on MySQL.

Measured on one shard (shard 3 of an 8-shard, one-host topology made by
``init_shards``), single-threaded, one operation at a time:

* create   -- ``store.objects("pin").create(3, {...})``
* get_many -- ``store.objects("pin").get_many(<50 pin IDs on shard 3>)``
* page     -- ``store.mapping("board_has_pins").page(board, limit=50)`` on a
  board with 300 pins

On MySQL each figure is set against the same work done by hand through
mysqlclient on one reused connection, on the same tables of the same server
(``INSERT INTO db00003.pins (data) VALUES (%s)``; ``SELECT local_id, data ...
WHERE local_id IN (...)`` plus ``json.loads`` of each row; ``SELECT to_id,
sequence ... ORDER BY sequence DESC, to_id DESC LIMIT 51``), and the ratio
shardstore/raw is printed (the acceptance bar is >= 0.7 for get_many and page).
Each measurement is split into rounds that alternate shardstore and raw, and
the median round is reported, so drift and noise do not favour either side.

Run it with ``make bench`` (``python bench/store.py``). Options::

    --backend sqlite|mysql|all   (default all; mysql is skipped under "all"
                                  when no MariaDB or mysqlclient is installed)
    --seconds N                  time per measurement and side (default 3)
    --mysql-address mysql://root@127.0.0.1:PORT
                                 use this server instead of starting a private
                                 MariaDB through tests/servers.py
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
from pathlib import Path
from urllib.parse import unquote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shardstore import Store, Topology, compose, decompose, init_shards

SHARD = 3
SHARDS = 8
BATCH = 50
BOARD_PINS = 300
ROUNDS = 6


def pin_data(n: int) -> dict:
    return {
        "title": f"Pin number {n}",
        "description": "A fine picture of something worth keeping, saved for later.",
        "image": f"https://img.example.com/originals/{n:08x}.jpg",
        "link": "https://example.com/article",
        "width": 736,
        "height": 1104,
    }


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


def measure(sides: list[Callable[[], object]], seconds: float) -> list[float]:
    """Median ops/s of each side over rounds alternating the sides (order flipped each round)."""
    for op in sides:  # warm up connections, caches and the buffer pool
        timed(op, 0.2)
    rounds: list[list[float]] = [[] for _ in sides]
    for r in range(ROUNDS):
        order = list(range(len(sides)))[:: 1 if r % 2 == 0 else -1]
        for i in order:
            rounds[i].append(timed(sides[i], seconds / ROUNDS))
    return [statistics.median(rates) for rates in rounds]


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


def raw_ops(connection, local_ids: list[int], board: int) -> dict[str, Callable[[], object]]:  # type: ignore[no-untyped-def]
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
    store = Store(Topology.single_host(address, shard_count=SHARDS))
    try:
        init_shards(store)
        ops, local_ids, board = shardstore_ops(store)
        if backend == "sqlite":
            return [(backend, name, measure([op], seconds)[0], None) for name, op in ops.items()]
        import MySQLdb

        parts = urlsplit(address)
        connection = MySQLdb.connect(
            host=parts.hostname, port=parts.port or 3306, user=unquote(parts.username or "root"),
            password=unquote(parts.password or ""), charset="utf8mb4", autocommit=True,
        )  # fmt: skip
        try:
            raw = raw_ops(connection, local_ids, board)
            return [(backend, name, *measure([op, raw[name]], seconds)) for name, op in ops.items()]
        finally:
            connection.close()
    finally:
        store.close()


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
        from tests.servers import MariaDBServer

        missing = None if importlib.util.find_spec("MySQLdb") else "mysqlclient is not installed"
        if not (missing or args.mysql_address or MariaDBServer.available()):
            missing = MariaDBServer.available().reason
        if missing and args.backend == "mysql":
            sys.exit(f"mysql: {missing}")
        if missing:
            print(f"(skipping mysql: {missing})")
        elif args.mysql_address:
            results += bench("mysql", args.mysql_address, args.seconds)
        else:
            with MariaDBServer() as server:
                results += bench("mysql", f"mysql://root@{server.address}", args.seconds)

    print(f"\n{'backend':<8} {'operation':<13} {'ops/s':>9} {'raw ops/s':>10} {'ratio':>6}")
    for backend, name, rate, raw in results:
        extra = f" {raw:>10.0f} {rate / raw:>6.2f}" if raw else ""
        print(f"{backend:<8} {name:<13} {rate:>9.0f}{extra}")
    print(f"\n(median of {ROUNDS} alternating rounds, {args.seconds:g}s per measurement and side;"
          f" get_many and page ratios must be >= 0.70)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
