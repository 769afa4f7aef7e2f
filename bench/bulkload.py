"""Bulk loading of pinners, boards and pins straight into the shard tables.

What it writes, as multi-row INSERTs on a few connections of its own (``Loader``):
pinners on random open shards (``load_pinners``: the user objects, their username
and email lookups, boards with their slugs, the board-slug lookups and
user_has_boards), and pins on given boards (``load_pins``: the pin objects,
board_has_pins with its inverse pin_owned_by_board, and user_has_pins), follows of
pinners and boards (``load_follows``), likes and comments (``load_reactions``), plus
the mapping_counts of every list. The rows and the object JSON are exactly what the
site's actions (sign_up, create_board, create_pin, follow, like, add_comment) would
write: objects colocated with their owner, local ids after the highest one each
shard's table holds, sequences in microseconds since the epoch, timestamps as
``isoformat()``, and counts added as the dialect's add_to_count does. Only the cache
pools (and the Redis graph and feeds) are bypassed, so a caller empties the pools and
rebuilds the graph after a load.

Used by bench/compare/dataset.py.
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

PIN, BOARD, USER, COMMENT = 1, 2, 3, 4  # type ids (pinboard.catalog.CATALOG)
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
COMMENTS = ["Love this!", "Saving for later.", "So good.", "Where is this?", "Trying it tonight."]


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
) -> tuple[dict[int, int], dict[int, str]]:
    """Pinners on random open shards, each with boards on their shard: ``{board_id: owner_id}``
    and ``{user_id: username}``.

    Rows as sign_up and create_board write them: the user object, its username and
    email lookups, boards (with their slug), board-slug lookups, user_has_boards + count.
    """
    from django.utils.text import slugify

    by_shard: dict[int, list[int]] = defaultdict(list)
    for n in range(users):
        by_shard[topology.random_open_shard(rng)].append(n)
    lookups: dict[tuple[int, str], list[tuple[str, int]]] = defaultdict(list)
    owner_of: dict[int, int] = {}
    usernames: dict[int, str] = {}

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
            usernames[user_id] = username
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
    return owner_of, usernames


def load_pins(
    loader: Loader,
    plan: dict[int, int],
    owner_of: dict[int, int],
    image: dict,
    rng: random.Random,
    *,
    window: tuple[int, int],
    label: str,
) -> list[int]:
    """``plan[board_id]`` pins on each board, as create_pin writes them.

    Per pin: the pin object on the board's shard, board_has_pins, its inverse
    pin_owned_by_board and user_has_pins (one sequence, which home feeds hold too), and
    their mapping_counts. Returns the IDs of the pins made.
    """
    by_shard: dict[int, list[int]] = defaultdict(list)
    for board_id in plan:
        by_shard[shard_of(board_id)].append(board_id)
    total, done, started = sum(plan.values()), 0, time.monotonic()
    made: list[int] = []
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
                made.append(pin_id)
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
                user_pins.append((owner_id, pin_id, sequence))
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
    return made


def load_follows(
    loader: Loader,
    rng: random.Random,
    followers: list[int],
    pinners: list[int],
    boards: dict[int, int],
    *,
    follows: int,
    board_follows: int,
    window: tuple[int, int],
) -> None:
    """Each of ``followers`` follows ``follows`` of ``pinners`` and ``board_follows`` of
    ``boards`` (``{board_id: owner_id}``), as the follow actions write them: each edge on
    both ends' shards, and the counts. Never themselves, and never a board of a pinner
    they follow (that board is followed already) or their own."""
    edges = Edges(rng, window)
    board_ids = list(boards)
    for user_id in followers:
        others = [p for p in rng.sample(pinners, min(follows + 1, len(pinners))) if p != user_id]
        followed = set(others[:follows])
        for other in followed:
            edges.add("user_follows_users", "user_followed_by_users", user_id, other)
        candidates = rng.sample(board_ids, min(board_follows * 3, len(board_ids)))
        chosen = [b for b in candidates if boards[b] not in followed and boards[b] != user_id]
        for board_id in chosen[:board_follows]:
            edges.add("user_follows_boards", "board_followed_by_users", user_id, board_id)
    edges.write(loader)


def load_reactions(
    loader: Loader,
    rng: random.Random,
    usernames: dict[int, str],
    pin_ids: list[int],
    *,
    likes: int,
    comments: int,
    window: tuple[int, int],
) -> None:
    """About ``likes`` likes (repeats dropped) and ``comments`` comments on random pins by
    random pinners, as the like and comment actions write them."""
    edges = Edges(rng, window)
    pinners = list(usernames)
    for pair in {(rng.choice(pinners), rng.choice(pin_ids)) for _ in range(likes)}:
        edges.add("user_likes_pins", "pin_liked_by_users", *pair)
    by_shard: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for _ in range(comments):
        author, pin_id = rng.choice(pinners), rng.choice(pin_ids)
        shard = shard_of(pin_id)
        local = loader.next_local(shard, "comments")
        created = rng.randrange(*window)
        by_shard[shard].append((local, encode({
            "pin_id": pin_id, "author_id": author, "author_username": usernames[author],
            "text": rng.choice(COMMENTS), "created_at": iso(created),
        })))  # fmt: skip
        edges.one_way("pin_has_comments", pin_id, compose(shard, COMMENT, local), created + 500)
    for shard, rows in sorted(by_shard.items()):
        loader.objects(shard, "comments", rows)
    edges.write(loader)


class Edges:
    """Mapping rows and counts gathered by shard, then written in multi-row INSERTs."""

    def __init__(self, rng: random.Random, window: tuple[int, int]) -> None:
        self.rng, self.window = rng, window
        self.rows: dict[tuple[int, str], list[tuple[int, int, int]]] = defaultdict(list)
        self.counts: dict[int, Counter] = defaultdict(Counter)

    def one_way(self, relation: str, from_id: int, to_id: int, sequence: int) -> None:
        self.rows[(shard_of(from_id), relation)].append((from_id, to_id, sequence))
        self.counts[shard_of(from_id)][(from_id, relation)] += 1

    def add(self, forward: str, inverse: str, a: int, b: int) -> None:
        """An edge and its inverse, with one sequence (as MappingTable.add writes them)."""
        sequence = self.rng.randrange(*self.window)
        self.one_way(forward, a, b, sequence)
        self.one_way(inverse, b, a, sequence)

    def write(self, loader: Loader) -> None:
        for (shard, relation), rows in sorted(self.rows.items()):
            loader.mappings(shard, relation, rows)
        for shard, counts in sorted(self.counts.items()):
            loader.counts(shard, counts)
        loader.wait()
