"""Bulk loading of pinners, boards and pins straight into the shard tables.

What it writes, as multi-row INSERTs on a few connections of its own (``Loader``):
pinners on random open shards (``load_pinners``: the user objects, their username
and email lookups, boards with their slugs, the board-slug lookups and
user_has_boards), and pins on given boards (``load_pins``: the pin objects,
board_has_pins with its inverse pin_owned_by_board, and user_has_pins), plus the
mapping_counts of every list. The rows and the object JSON are exactly what the
site's actions (sign_up, create_board, create_pin) would write: objects colocated
with their owner, local ids after the highest one each shard's table holds,
sequences in microseconds since the epoch, timestamps as ``isoformat()``, and
counts added as the dialect's add_to_count does. Only the cache pools are
bypassed, so a caller empties them after a load. ``verify`` checks every mapping
count against its rows and every board_has_pins row for its inverse;
``table_sizes`` reports the biggest shard tables.

Used by bench/pages.py, which puts the repository root on ``sys.path`` first.
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime

import MySQLdb

from shardstore import Topology, compose, shard_of
from shardstore.modshard import bucket

PIN, BOARD, USER = 1, 2, 3  # type ids (shardstore.catalog.CATALOG)
SECOND = 1_000_000  # sequences are microseconds since the epoch
DAY = 86_400 * SECOND

BOARD_NAMES = [
    "Weeknight dinners", "Tiny houses", "Trail running", "Mid-century chairs", "Watercolor",
    "Garden", "Typography", "Travel Japan", "Sourdough", "Cabin porn", "Knitting patterns",
    "Street photography", "Bathroom ideas", "Bike packing", "Ceramics", "Wedding flowers",
    "Posters", "Kids rooms", "Fermentation", "Bookshelves", "Desk setups", "Cocktails",
    "Houseplants", "Vintage cars", "Tattoo ideas", "Fonts", "Quilts", "Lighthouses",
    "Birthday cakes", "Hiking Alps",
]  # fmt: skip
WORDS = [
    "simple", "easy", "cozy", "minimal", "rustic", "bright", "bold", "tiny", "modern", "classic",
    "summer", "winter", "weekend", "quick", "healthy", "handmade", "vintage", "colorful", "calm",
    "green", "golden", "ocean", "forest", "city", "morning",
]  # fmt: skip
LINKS = [
    "https://example.com/recipes/{n}", "https://blog.example.org/posts/{n}-ideas",
    "https://www.example.net/gallery/{n}", "https://shop.example.com/item/{n}?ref=pin",
]  # fmt: skip


def sql_string(text: str) -> str:
    """A MySQL string literal for ASCII JSON (json.dumps escapes everything else)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def encode(data: dict) -> str:
    """The object JSON, as shardstore.objects._encode writes it."""
    return json.dumps(data, separators=(",", ":"))


def iso(micros: int) -> str:
    """``timezone.now().isoformat()`` at ``micros``."""
    return datetime.fromtimestamp(micros / SECOND, tz=UTC).isoformat()


class Loader:
    """Multi-row INSERTs on a few connections of their own, while the caller builds rows."""

    def __init__(self, params: dict, batch: int, threads: int) -> None:
        self.params, self.batch = params, batch
        self.conn = MySQLdb.connect(**params)
        self._local = threading.local()
        # Every connection is also held here, so that close() closes the pool threads' too
        # and none is closed by a thread-local's cleanup: a child that ran Python after
        # fork (a preexec_fn) would send COM_QUIT down such a connection, shared with it.
        self._connections = [self.conn]
        self._pool = ThreadPoolExecutor(threads)
        self._pending: list[Future] = []
        self._max_pending = threads * 2
        self._next_local: dict[tuple[int, str], int] = {}
        self.rows = Counter()

    def close(self) -> None:
        self.wait()
        self._pool.shutdown()
        for conn in self._connections:
            conn.close()

    # -- local ids: explicit, after the highest one the shard's table holds --

    def new_phase(self) -> None:
        """Forget cached local ids: the site's actions may have made rows since."""
        self.wait()
        self._next_local.clear()

    def next_local(self, shard: int, table: str) -> int:
        key = (shard, table)
        if key not in self._next_local:
            cursor = self.conn.cursor()
            cursor.execute(f"SELECT COALESCE(MAX(local_id), 0) FROM db{shard:05d}.{table}")
            self._next_local[key] = int(cursor.fetchone()[0]) + 1
        local = self._next_local[key]
        self._next_local[key] = local + 1
        return local

    # -- statements ----------------------------------------------------------

    def _run(self, sql: str) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = MySQLdb.connect(**self.params)
            self._connections.append(conn)
        conn.cursor().execute(sql)

    def _submit(self, sql: str) -> None:
        while len(self._pending) >= self._max_pending:
            self._pending.pop(0).result()
        self._pending.append(self._pool.submit(self._run, sql))

    def wait(self) -> None:
        while self._pending:
            self._pending.pop(0).result()

    def _insert(self, head: str, rows: list[str], tail: str = "") -> None:
        for start in range(0, len(rows), self.batch):
            self._submit(head + ",".join(rows[start : start + self.batch]) + tail)

    def objects(self, shard: int, table: str, rows: list[tuple[int, str]]) -> None:
        values = [f"({local},{sql_string(text)})" for local, text in rows]
        self._insert(f"INSERT INTO db{shard:05d}.{table} (local_id, data) VALUES ", values)
        self.rows[table] += len(rows)

    def mappings(self, shard: int, relation: str, rows: list[tuple[int, int, int]]) -> None:
        values = [f"({f},{t},{s})" for f, t, s in rows]
        self._insert(
            f"INSERT INTO db{shard:05d}.{relation} (from_id, to_id, sequence) VALUES ", values
        )
        self.rows[relation] += len(rows)

    def counts(self, shard: int, counts: dict[tuple[int, str], int]) -> None:
        """Add to mapping_counts as the dialect's add_to_count does (one row per key)."""
        values = [f"({f},'{relation}',{n})" for (f, relation), n in counts.items()]
        self._insert(
            f"INSERT INTO db{shard:05d}.mapping_counts (from_id, relation, n) VALUES ",
            values,
            " ON DUPLICATE KEY UPDATE n = n + VALUES(n)",
        )

    def lookups(self, shard: int, table: str, rows: list[tuple[str, int]]) -> None:
        values = [f"({sql_string(key)},{object_id})" for key, object_id in rows]
        self._insert(f"INSERT INTO db{shard:05d}.{table} (lookup_key, object_id) VALUES ", values)
        self.rows[table] += len(rows)


def load_pinners(
    loader: Loader,
    topology: Topology,
    rng: random.Random,
    *,
    users: int,
    boards_per_user: int,
    password: str,
    now: int,
) -> dict[int, int]:
    """Pinners on random open shards, each with boards on their shard: ``{board_id: owner_id}``.

    Rows as sign_up and create_board write them: the user object, its username and
    email lookups, boards (with their slug), board-slug lookups, user_has_boards + count.
    """
    from django.utils.text import slugify

    by_shard: dict[int, list[int]] = defaultdict(list)
    for n in range(users):
        by_shard[topology.random_open_shard(rng)].append(n)
    lookups: dict[tuple[int, str], list[tuple[str, int]]] = defaultdict(list)
    owner_of: dict[int, int] = {}

    def lookup(table: str, key: str, object_id: int) -> None:
        key = key.strip().casefold()
        lookups[(topology.lookup_shard(bucket(key)), table)].append((key, object_id))

    for shard, numbers in sorted(by_shard.items()):
        user_rows, board_rows, has_boards, counts = [], [], [], {}
        for n in numbers:
            joined = now - 3 * 365 * DAY + rng.randrange(365 * DAY)
            username, email = f"pinner{n:05d}", f"pinner{n:05d}@example.com"
            local = loader.next_local(shard, "users")
            user_id = compose(shard, USER, local)
            user_rows.append((local, encode({
                "username": username, "email": email, "password": password, "about": "",
                "created_at": iso(joined),
            })))  # fmt: skip
            lookup("lookup_username", username, user_id)
            lookup("lookup_email", email, user_id)
            for i, name in enumerate(rng.sample(BOARD_NAMES, boards_per_user)):
                created = joined + (i + 1) * rng.randrange(1, 30 * DAY)
                local = loader.next_local(shard, "boards")
                board_id = compose(shard, BOARD, local)
                slug = slugify(name)[:80]
                board_rows.append((local, encode({
                    "owner_id": user_id, "name": name, "description": "",
                    "created_at": iso(created), "slug": slug,
                })))  # fmt: skip
                lookup("lookup_board_slug", f"{user_id}:{slug}", board_id)
                has_boards.append((user_id, board_id, created + 5_000))
                owner_of[board_id] = user_id
            counts[(user_id, "user_has_boards")] = boards_per_user
        loader.objects(shard, "users", user_rows)
        loader.objects(shard, "boards", board_rows)
        loader.mappings(shard, "user_has_boards", has_boards)
        loader.counts(shard, counts)
    for (shard, table), rows in sorted(lookups.items()):
        loader.lookups(shard, table, rows)
    loader.wait()
    return owner_of


def load_pins(
    loader: Loader,
    plan: dict[int, int],
    owner_of: dict[int, int],
    image: dict,
    rng: random.Random,
    *,
    window: tuple[int, int],
    label: str,
) -> int:
    """``plan[board_id]`` pins on each board, as create_pin writes them.

    Per pin: the pin object on the board's shard, board_has_pins and its inverse
    pin_owned_by_board (one sequence), user_has_pins (a later sequence), and
    their mapping_counts. Returns the number of pins made.
    """
    by_shard: dict[int, list[int]] = defaultdict(list)
    for board_id in plan:
        by_shard[shard_of(board_id)].append(board_id)
    total, done, started = sum(plan.values()), 0, time.monotonic()
    shown = started
    for shard, boards in sorted(by_shard.items()):
        pins, has_pins, owned_by, user_pins = [], [], [], []
        counts: dict[tuple[int, str], int] = Counter()
        for board_id in boards:
            owner_id = owner_of[board_id]
            for _ in range(plan[board_id]):
                created = rng.randrange(*window)
                local = loader.next_local(shard, "pins")
                pin_id = compose(shard, PIN, local)
                n = rng.randrange(10**6)
                description = " ".join(rng.sample(WORDS, rng.randint(2, 6))).capitalize()
                pins.append((local, encode({
                    "description": f"{description} #{n}",
                    "link": rng.choice(LINKS).format(n=n) if n % 4 else "",
                    "image": image, "board_id": board_id, "owner_id": owner_id,
                    "created_at": iso(created),
                })))  # fmt: skip
                sequence = created + rng.randrange(200, 2_000)  # the object insert came first
                has_pins.append((board_id, pin_id, sequence))
                owned_by.append((pin_id, board_id, sequence))
                user_pins.append((owner_id, pin_id, sequence + rng.randrange(200, 2_000)))
                counts[(board_id, "board_has_pins")] += 1
                counts[(pin_id, "pin_owned_by_board")] += 1
                counts[(owner_id, "user_has_pins")] += 1
        loader.objects(shard, "pins", pins)
        loader.mappings(shard, "board_has_pins", has_pins)
        loader.mappings(shard, "pin_owned_by_board", owned_by)
        loader.mappings(shard, "user_has_pins", user_pins)
        loader.counts(shard, counts)
        done += len(pins)
        now = time.monotonic()
        if now - shown > 10 or done == total:
            shown = now
            rate = done / max(now - started, 1e-9)
            print(f"  {label}: {done:,}/{total:,} pins ({rate:,.0f}/s)", file=sys.stderr)
    loader.wait()
    return total


def verify(loader: Loader, topology: Topology) -> list[str]:
    """Every mapping count equals its rows, and every board_has_pins row has its inverse."""
    problems = []
    cursor = loader.conn.cursor()
    relations = ["user_has_boards", "board_has_pins", "pin_owned_by_board", "user_has_pins"]
    totals = Counter()
    for shard in range(topology.shard_count):
        db = f"db{shard:05d}"
        for relation in relations:
            cursor.execute(
                f"SELECT COUNT(*) FROM (SELECT from_id, COUNT(*) c FROM {db}.{relation}"
                f" GROUP BY from_id) r LEFT JOIN {db}.mapping_counts m ON m.from_id = r.from_id"
                f" AND m.relation = %s WHERE m.n IS NULL OR m.n <> r.c",
                (relation,),
            )
            bad = cursor.fetchone()[0]
            cursor.execute(
                f"SELECT COUNT(*) FROM {db}.mapping_counts m WHERE m.relation = %s AND m.n <> 0"
                f" AND NOT EXISTS (SELECT 1 FROM {db}.{relation} r WHERE r.from_id = m.from_id)",
                (relation,),
            )
            bad += cursor.fetchone()[0]
            if bad:
                problems.append(f"{db}.{relation}: {bad} lists whose count differs from their rows")
        cursor.execute(
            f"SELECT COUNT(*) FROM {db}.board_has_pins b LEFT JOIN {db}.pin_owned_by_board p"
            f" ON p.from_id = b.to_id AND p.to_id = b.from_id WHERE p.from_id IS NULL"
        )
        if missing := cursor.fetchone()[0]:
            problems.append(f"{db}: {missing} board_has_pins rows without their inverse")
        for table in ("pins", "board_has_pins", "pin_owned_by_board", "user_has_pins"):
            cursor.execute(f"SELECT COUNT(*) FROM {db}.{table}")
            totals[table] += cursor.fetchone()[0]
    if len(set(totals.values())) != 1:
        problems.append(f"row totals differ: {dict(totals)}")
    return problems


def table_sizes(loader: Loader) -> str:
    cursor = loader.conn.cursor()
    cursor.execute(
        "SELECT table_name, SUM(data_length + index_length) FROM information_schema.tables"
        " WHERE table_schema LIKE 'db%' GROUP BY table_name ORDER BY 2 DESC LIMIT 6"
    )
    return ", ".join(f"{name} {int(size) / 2**20:,.0f} MB" for name, size in cursor.fetchall())
