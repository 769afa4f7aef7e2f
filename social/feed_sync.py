"""Home feeds from MySQL: what each pinner's feed holds by the rules of fan-out, and the
rebuild and check of the Redis feeds against it.

A pinner's home feed is what fan-out on write keeps (social/feeds.py, the
site's feeds app): every pin of every board they follow, explicitly
(``user_follows_boards``) or through following its owner (``user_follows_users``:
all the owner's boards, less those unfollowed, ``user_unfollows_boards``), and
their own pins (a pin's fan-out reaches its owner too). A secret board's pins reach no
feed: the owner's public lists (``user_has_boards``, ``user_has_pins``) hold none of them,
and a secret board followed explicitly is left out. One entry per pin,
``<pin id>:<sequence>:<board id>`` with the sequence of the list holding it, newest first,
the newest ``FEED_LENGTH`` kept. ``expected_feeds`` computes exactly that, for a
batch of pinners at a time; the site's rebuild of a pinner back after a long
time is the same function.

Its cost does not grow with the pins of a board: the newest 50 of each followed
board are read first (one query per shard for all the boards of a batch), and a
board is read deeper (200, then ``FEED_LENGTH``) only while everything it gave
would still make the feed's cut.

Which feeds are kept current: fan-out reaches active pinners only (``seen:<id>``,
a visit within two weeks); a dormant pinner's feed is rebuilt at their next
visit. So ``check`` and ``repair`` compare the feeds of active pinners. A
``rebuild`` (``everyone=True``: after Redis lost its data, and with it who was
active) writes the feed of every pinner who follows anyone or owns a board and
counts them active, so that fan-out keeps those feeds from then on.

Entries of deleted pins are not drift: deleting a pin leaves its entries, which
pages skip. A feed kept for a pinner who follows nobody and owns no board is not
looked at (such a pinner is found by no scan of MySQL).

Work goes shard by shard (the pinners whose rows live there), so a long job can
run it one chunk at a time, again harmlessly. Writes race with the site's own:
a feed is read before its expected contents are, and rewritten under WATCH only
if it is still what was read (else it is computed again): a follow, an unfollow
or a fan-out that lands meanwhile edits the feed after its MySQL write, so it is
either seen by the computation or applied on top of the rewrite.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from shardstore.interface import StoreInterface
from shardstore.mappings import MAX_PAGE, all_ids
from shardstore.objects import is_active

from .feeds import (
    ACTIVE_SECONDS,
    FEED_LENGTH,
    Entry,
    HomeFeeds,
    feed_key,
    newest,
    parse_entry,
    seen_key,
)
from .rules import board_list, is_save, pin_list, reaches_followers

#: How deep each followed board is read, round after round, while it may make the cut.
BOARD_DEPTHS = (50, 200, FEED_LENGTH)
#: Pinners computed together (their lists read in one query per shard).
BATCH = 100
#: Rewrites of one feed tried while the site keeps changing it.
WRITE_ATTEMPTS = 10


@dataclass
class FeedReport:
    feeds_checked: int = 0  # feeds compared with MySQL (active pinners, or everyone)
    feeds_repaired: int = 0  # that differed (in a check: that would be rewritten)
    feeds_missed: int = 0  # that kept changing under the rewrite: left for a later run
    drift: list[str] = field(default_factory=list)  # the first few feed keys that differed

    def note(self, key: str) -> None:
        if len(self.drift) < 20:
            self.drift.append(key)

    def add(self, other: FeedReport) -> None:
        self.feeds_checked += other.feeds_checked
        self.feeds_repaired += other.feeds_repaired
        self.feeds_missed += other.feeds_missed
        for key in other.drift:
            self.note(key)


# -- what a feed should hold ---------------------------------------------------------


def expected_feeds(
    store: StoreInterface, user_ids: Iterable[int], *, length: int = FEED_LENGTH
) -> dict[int, list[Entry]]:
    """Each pinner's feed as MySQL implies it: (sequence, pin id), newest first."""
    return expected_with_boards(store, user_ids, length=length)[0]


def expected_with_boards(
    store: StoreInterface, user_ids: Iterable[int], *, length: int = FEED_LENGTH
) -> tuple[dict[int, list[Entry]], dict[int, int]]:
    """``expected_feeds``, and the board of each of their pins, which their entries name:
    from the boards' lists, and for the pinners' own pins (whose list names no board)
    from the pins, in one read of them."""
    users = list(dict.fromkeys(user_ids))
    if not users:
        return {}, {}
    followees = _every_to_id(store, "user_follows_users", users)
    explicit = _every_to_id(store, "user_follows_boards", users)
    unfollowed = _every_to_id(store, "user_unfollows_boards", users)
    secret = _secret_boards(store, {board for boards in explicit.values() for board in boards})
    owners = list(dict.fromkeys(f for u in users for f in followees[u]))
    boards_of = _every_to_id(store, board_list(secret=False), owners)
    sources: dict[int, set[int]] = {}
    for user in users:
        through_owners = {b for owner in followees[user] for b in boards_of[owner]}
        sources[user] = (through_owners - set(unfollowed[user])) | (set(explicit[user]) - secret)
    own = store.mapping(pin_list(secret=False)).rows_many(users, limit=length)

    pins: dict[int, list[tuple[int, int]]] = {}  # board -> (pin id, sequence), newest first
    depth: dict[int, int] = {}
    wanted = {board for boards in sources.values() for board in boards}
    feeds: dict[int, list[Entry]] = {}
    for deepest in BOARD_DEPTHS:
        limit = min(deepest, length)
        if wanted:
            pins.update(store.mapping("board_has_pins").rows_many(sorted(wanted), limit=limit))
            depth.update(dict.fromkeys(wanted, limit))
        feeds = {u: _newest([own[u], *(pins[b] for b in sources[u])], length) for u in users}
        wanted = set()
        for user, feed in feeds.items():
            cut = feed[-1] if len(feed) == length else None
            for board in sources[user]:
                rows = pins[board]
                deeper = len(rows) == depth[board] < length
                if deeper and (cut is None or (rows[-1][1], rows[-1][0]) > cut):
                    wanted.add(board)  # all it gave made the cut: more of it may too
        if not wanted:
            break
    boards = {pin_id: board for board, rows in pins.items() for pin_id, _ in rows}
    unnamed = sorted({p for feed in feeds.values() for _, p in feed} - boards.keys())
    if unnamed:
        found = store.objects("pin").get_many(unnamed, include_inactive=True)
        boards.update((pin["id"], pin["board_id"]) for pin in found)
    return feeds, boards


def _secret_boards(store: StoreInterface, board_ids: set[int]) -> set[int]:
    """Which of these boards' pins reach no feed (``rules.reaches_followers``)."""
    boards = store.objects("board").get_many(sorted(board_ids)) if board_ids else []
    return {board["id"] for board in boards if not reaches_followers(board)}


def _newest(lists: Iterable[list[tuple[int, int]]], length: int) -> list[Entry]:
    """One entry per pin (its highest sequence), newest first, ``length`` at most."""
    return newest(((sequence, pin_id) for rows in lists for pin_id, sequence in rows), length)


def _every_to_id(store: StoreInterface, relation: str, from_ids: list[int]) -> dict[int, list[int]]:
    """Every to-ID of each list: one query per shard, and more pages for the rare long list."""
    if not from_ids:
        return {}
    table = store.mapping(relation)
    rows = table.rows_many(from_ids, limit=MAX_PAGE + 1)
    found = {}
    for from_id in from_ids:
        listed = rows.get(from_id, [])
        found[from_id] = (
            all_ids(table, from_id) if len(listed) > MAX_PAGE else [to for to, _ in listed]
        )
    return found


# -- the sync --------------------------------------------------------------------------


def sync_feeds(
    store: StoreInterface,
    feeds: HomeFeeds,
    *,
    repair: bool = True,
    everyone: bool = False,
    shards: Iterable[int] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> FeedReport:
    """Make the Redis feeds equal to what MySQL implies (``repair=False``: report only).

    Active pinners' feeds, or with ``everyone`` every pinner's, marked active. ``shards``
    limits it to the pinners of those shards (a long job's chunk).
    """
    report = FeedReport()
    walk = list(range(store.topology.shard_count) if shards is None else shards)
    for done, shard_id in enumerate(walk, 1):
        for batch in _batches(_pinners(store, shard_id), BATCH):
            report.add(_sync_batch(store, feeds, batch, repair=repair, everyone=everyone))
        if progress:
            progress(done, len(walk))
    return report


def _pinners(store: StoreInterface, shard_id: int) -> Iterator[int]:
    """The pinners of a shard who follow anyone or own a board, each once, in ID order."""
    found: set[int] = set()
    for relation in ("user_follows_users", "user_follows_boards", "user_has_boards"):
        for rows in store.mapping(relation).scan(shard_id):
            found.update(from_id for from_id, _, _ in rows)
    yield from sorted(found)


def _batches(items: Iterable[int], size: int) -> Iterator[list[int]]:
    batch: list[int] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _sync_batch(
    store: StoreInterface, feeds: HomeFeeds, users: list[int], *, repair: bool, everyone: bool
) -> FeedReport:
    report = FeedReport()
    shards = feeds.shards
    groups = shards.group(users)
    if everyone and repair:  # active from now on: fan-out reaches them before they are read
        for instance, members in groups.items():
            pipe = shards.client(instance).pipeline(transaction=False)
            for user in members:
                pipe.set(seen_key(user), 1, ex=ACTIVE_SECONDS)
            pipe.execute()
            shards.count_call()
    read: dict[int, list[Entry]] = {}
    for instance, members in groups.items():
        pipe = shards.client(instance).pipeline(transaction=False)
        for user in members:
            pipe.exists(seen_key(user))
            pipe.lrange(feed_key(user), 0, -1)
        replies = pipe.execute()
        shards.count_call()
        for n, user in enumerate(members):
            if everyone or replies[2 * n]:
                read[user] = [parse_entry(raw) for raw in replies[2 * n + 1]]
    expected, boards = expected_with_boards(store, list(read), length=feeds.length)
    hidden = _deleted_pins(store, read, expected)
    for user, current in read.items():
        report.feeds_checked += 1
        if [e for e in current if e[1] not in hidden] == expected[user]:
            continue
        report.feeds_repaired += 1
        report.note(feed_key(user))
        if repair and not _rewrite(store, feeds, user, current, expected[user], boards):
            report.feeds_missed += 1
    return report


def _deleted_pins(
    store: StoreInterface, read: dict[int, list[Entry]], expected: dict[int, list[Entry]]
) -> set[int]:
    """Pins in feeds but not expected there that are deleted (pages skip them)."""
    extra = {
        pin_id
        for user, current in read.items()
        for pin_id in {p for _, p in current} - {p for _, p in expected[user]}
    }
    if not extra:
        return set()
    pins = store.objects("pin").get_many(sorted(extra), include_inactive=True)
    alive = {pin["id"] for pin in pins if is_active(pin)}
    return extra - alive


def rebuild_feed(store: StoreInterface, feeds: HomeFeeds, user_id: int) -> bool:
    """Rewrite one pinner's feed from MySQL (a pinner back after a long time); False if the
    site kept changing it through every attempt."""
    read = feeds.entries(user_id)
    expected, boards = expected_with_boards(store, [user_id], length=feeds.length)
    return _rewrite(store, feeds, user_id, read, expected[user_id], boards)


def _rewrite(
    store: StoreInterface,
    feeds: HomeFeeds,
    user: int,
    read: list[Entry],
    expected: list[Entry],
    boards: dict[int, int] | None = None,
) -> bool:
    """Set the feed to ``expected`` (its pins' ``boards`` named) if it is still ``read``;
    else compute it again. False if the site kept changing it through every attempt."""
    named = dict(boards or {})

    def change(current: list[Entry]) -> list[Entry]:
        nonlocal read, expected
        if current != read:  # changed since it was read: MySQL may have too
            feeds_now, boards_now = expected_with_boards(store, [user], length=feeds.length)
            read, expected = current, feeds_now[user]
            named.update(boards_now)
        return expected

    return feeds.rewrite(user, change, attempts=WRITE_ATTEMPTS, boards=named)


# -- the site's newest pins ------------------------------------------------------------


def rebuild_recent(store: StoreInterface, feeds: HomeFeeds) -> int:
    """The site's newest pins from MySQL, for a Redis that starts empty (the embedded
    in-process one): the newest public pins (``rules.pin_list``: a secret board's are not
    there) that are not saves (``rules.reaches_newest``), as fan-out adds them. Reads every shard's list rows; returns
    how many pins it holds."""
    rows = (
        (sequence, pin_id)
        for shard_id in range(store.topology.shard_count)
        for batch in store.mapping(pin_list(secret=False)).scan(shard_id)
        for _, pin_id, sequence in batch
    )
    candidates = heapq.nlargest(2 * feeds.length, rows)  # saves among them are left out
    pins = store.objects("pin").get_many([pin_id for _, pin_id in candidates])
    originals = {pin["id"] for pin in pins if not is_save(pin)}
    newest = [(s, p) for s, p in candidates if p in originals][: feeds.length]
    feeds.replace_recent(newest)
    return len(newest)
