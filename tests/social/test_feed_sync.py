"""Home feeds from MySQL: the expected feed against an oracle, and the rebuild, check and
repair of Redis feeds (the contract store, sqlite and mysql; real Redis, one instance or two).

The oracle reads every list whole; ``expected_feeds`` reads boards 50 pins deep and goes
deeper only where it must, so worlds here have boards longer than that.
"""

from __future__ import annotations

import random

import pytest

import social.jobs  # noqa: F401 - registers the feed rebuild
from shardstore import Store
from shardstore.ids import shard_of
from shardstore.jobs import JobContext, kind
from shardstore.redis_shards import RedisShards
from social.feed_sync import _rewrite, expected_feeds, rebuild_feed, sync_feeds
from social.feeds import ACTIVE_SECONDS, HomeFeeds, entry, feed_key, seen_key

from .vshard_users import HIGH, user

Entry = tuple[int, int]


@pytest.fixture
def store(plain_store: Store) -> Store:
    return plain_store


@pytest.fixture
def feeds(redis_shards: RedisShards) -> HomeFeeds:
    return HomeFeeds(redis_shards)


class World:
    """Pinners, boards, pins and follows written to MySQL, and an oracle of their feeds."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.sequence = 1_700_000_000_000_000
        self.boards_of: dict[int, list[int]] = {}
        self.pins_of: dict[int, list[tuple[int, int]]] = {}  # board -> (pin, sequence)
        self.own: dict[int, list[tuple[int, int]]] = {}
        self.follows: dict[int, set[int]] = {}
        self.board_follows: dict[int, set[int]] = {}
        self.unfollows: dict[int, set[int]] = {}

    def tick(self, step: int = 1) -> int:
        self.sequence += step
        return self.sequence

    def pinner(self, user_id: int) -> int:
        for table in (self.boards_of, self.own, self.follows, self.board_follows, self.unfollows):
            table.setdefault(user_id, [] if table in (self.boards_of, self.own) else set())  # type: ignore[arg-type]
        return user_id

    def board(self, owner: int) -> int:
        board = self.store.objects("board").create(shard_of(owner), {"owner_id": owner})
        self.store.mapping("user_has_boards").add(owner, board, sequence=self.tick())
        self.boards_of[owner].append(board)
        self.pins_of[board] = []
        return board

    def pin(self, owner: int, board: int, sequence: int | None = None) -> int:
        sequence = self.tick() if sequence is None else sequence
        pin = self.store.objects("pin").create(shard_of(board), {"board_id": board})
        self.store.mapping("board_has_pins").add(board, pin, sequence=sequence)
        self.store.mapping("user_has_pins").add(owner, pin, sequence=sequence)
        self.pins_of[board].append((pin, sequence))
        self.own[owner].append((pin, sequence))
        return pin

    def follow(self, follower: int, followee: int) -> None:
        self.store.mapping("user_follows_users").add(follower, followee, sequence=self.tick())
        self.follows[follower].add(followee)

    def follow_board(self, follower: int, board: int) -> None:
        self.store.mapping("user_follows_boards").add(follower, board, sequence=self.tick())
        self.board_follows[follower].add(board)

    def unfollow_board(self, follower: int, board: int) -> None:
        self.store.mapping("user_unfollows_boards").add(follower, board, sequence=self.tick())
        self.unfollows[follower].add(board)

    def delete_pin(self, board: int, pin: int) -> None:
        """As the site deletes a pin: off its lists, the object soft-deleted."""
        owner = next(o for o, boards in self.boards_of.items() if board in boards)
        self.store.mapping("board_has_pins").remove(board, pin)
        self.store.mapping("user_has_pins").remove(owner, pin)
        self.store.objects("pin").delete(pin)
        self.pins_of[board] = [(p, s) for p, s in self.pins_of[board] if p != pin]
        self.own[owner] = [(p, s) for p, s in self.own[owner] if p != pin]

    def oracle(self, user_id: int, length: int) -> list[Entry]:
        boards = {b for f in self.follows[user_id] for b in self.boards_of[f]}
        boards = (boards - self.unfollows[user_id]) | self.board_follows[user_id]
        newest: dict[int, int] = {}
        for pin, sequence in [*self.own[user_id], *(e for b in boards for e in self.pins_of[b])]:
            newest[pin] = max(sequence, newest.get(pin, sequence))
        return sorted(((s, p) for p, s in newest.items()), reverse=True)[:length]


def random_world(store: Store, seed: int, *, pins: int) -> World:
    """Five pinners on several shards and both Redis halves, boards up to ``pins`` long."""
    rng = random.Random(seed)
    world = World(store)
    users = [world.pinner(u) for u in (user(1), user(HIGH + 2), user(3, shard=9), user(HIGH + 4, shard=12), user(5, shard=9))]  # fmt: skip
    boards = [world.board(owner) for owner in users for _ in range(2)]
    start = world.tick()
    times = iter(rng.sample(range(start, start + 100 * pins * len(boards)), pins * len(boards)))
    for board in boards:  # boards' pins interleaved in time
        owner = next(o for o in users if board in world.boards_of[o])
        for _ in range(rng.randint(0, pins)):
            world.pin(owner, board, next(times))
    world.tick(100 * pins * len(boards))
    for follower in users:
        for other in rng.sample([u for u in users if u != follower], 2):
            if rng.random() < 0.5:
                world.follow(follower, other)
                world.unfollow_board(follower, rng.choice(world.boards_of[other]))
            else:
                world.follow_board(follower, rng.choice(world.boards_of[other]))
    return world


def feed_of(feeds: HomeFeeds, user_id: int) -> list[Entry]:
    return feeds.entries(user_id)


@pytest.mark.parametrize("length", [40, 120, 1000])
def test_the_expected_feed_is_the_oracle_s_at_any_depth(store: Store, length: int) -> None:
    world = random_world(store, seed=length, pins=130)
    users = list(world.follows)
    assert expected_feeds(store, users, length=length) == {
        u: world.oracle(u, length) for u in users
    }
    # one pinner at a time, or all together: the same
    assert expected_feeds(store, users[:1], length=length) == {
        users[0]: world.oracle(users[0], length)
    }


def test_a_rebuild_after_a_wipe_writes_every_feed_and_counts_its_pinner_active(
    store: Store, feeds: HomeFeeds
) -> None:
    world = random_world(store, seed=7, pins=70)
    users = list(world.follows)
    report = sync_feeds(store, feeds, everyone=True)
    assert report.feeds_checked == len(users) and report.feeds_missed == 0
    for u in users:
        assert feed_of(feeds, u) == world.oracle(u, feeds.length)
        ttl = feeds.shards.client_for(u).ttl(seen_key(u))
        assert 0 < ttl <= ACTIVE_SECONDS
    for client in feeds.shards.clients().values():
        client.flushall()
    lost = sync_feeds(store, feeds, repair=False)
    assert lost.feeds_checked == 0  # nobody is active any more: nothing to compare
    sync_feeds(store, feeds, everyone=True)
    assert {u: feed_of(feeds, u) for u in users} == {u: world.oracle(u, 1000) for u in users}
    clean = sync_feeds(store, feeds, repair=False)
    assert (clean.feeds_checked, clean.feeds_repaired, clean.drift) == (len(users), 0, [])


def test_check_reports_drift_of_active_feeds_and_repair_fixes_it(
    store: Store, feeds: HomeFeeds
) -> None:
    world = random_world(store, seed=11, pins=20)
    sync_feeds(store, feeds, everyone=True)
    seeing = [u for u in world.follows if world.oracle(u, 1000)]
    a, b, c = seeing[:3]
    d = next(u for u in world.follows if u not in (a, b, c))
    client = feeds.shards.client_for
    board_of = {p: board for board, pins in world.pins_of.items() for p, _ in pins}

    # a: its newest entry lost (an entry names its pin's board); b: a live pin it has no
    # reason to see
    newest = world.oracle(a, 1000)[0]
    assert client(a).lrem(feed_key(a), 1, entry(newest[1], newest[0], board_of[newest[1]])) == 1
    foreign = min(board_of.keys() - {p for _, p in world.oracle(b, 1000)})
    client(b).lpush(feed_key(b), entry(foreign, world.tick()))
    # c: one of its pins deleted, the entry left behind (pages skip it: not drift)
    gone = world.oracle(c, 1000)[-1][1]
    board = next(x for x, pins in world.pins_of.items() if gone in {p for p, _ in pins})
    world.delete_pin(board, gone)
    # d: dormant (no visit lately), its feed wrong: rebuilt at its next visit, not looked at
    client(d).delete(seen_key(d))
    client(d).lpush(feed_key(d), entry(12345, 1))

    report = sync_feeds(store, feeds, repair=False)
    assert set(report.drift) == {feed_key(a), feed_key(b)}
    assert report.feeds_checked == len(world.follows) - 1 and report.feeds_repaired == 2
    assert sync_feeds(store, feeds, repair=False).drift == report.drift  # a check changes nothing

    repaired = sync_feeds(store, feeds)
    assert repaired.feeds_repaired == 2 and repaired.feeds_missed == 0
    for u in world.follows:
        if u != d:
            visible = [e for e in feed_of(feeds, u) if e[1] != gone]
            assert visible == world.oracle(u, 1000)
    assert feed_of(feeds, c)[-1][1] == gone  # left alone: not drift
    assert feed_of(feeds, d)[0] == (1, 12345)
    assert sync_feeds(store, feeds, repair=False).drift == []


def test_a_sync_of_some_shards_touches_only_their_pinners(store: Store, feeds: HomeFeeds) -> None:
    world = random_world(store, seed=3, pins=10)
    on_nine = [u for u in world.follows if shard_of(u) == 9]
    report = sync_feeds(store, feeds, everyone=True, shards=[9])
    assert report.feeds_checked == len(on_nine) == 2
    for u in world.follows:
        written = feeds.shards.client_for(u).exists(seen_key(u))
        assert bool(written) == (u in on_nine)


def test_a_rewrite_computes_again_when_the_feed_moved_since_it_was_read(
    store: Store, feeds: HomeFeeds
) -> None:
    """A follow lands between the read of a feed and its rewrite: MySQL first, then the feed
    (as the site does). The rewrite sees the feed moved and computes it again."""
    world = random_world(store, seed=5, pins=8)
    reader, owner = user(40), next(iter(world.follows))
    world.pinner(reader)
    sync_feeds(store, feeds, everyone=True)
    read = feed_of(feeds, reader)
    stale = expected_feeds(store, [reader])[reader]
    world.follow(reader, owner)  # MySQL...
    feeds.merge(reader, [(s, p) for p, s in world.own[owner]])  # ...then the feed
    assert _rewrite(store, feeds, reader, read, stale) is True
    assert feed_of(feeds, reader) == world.oracle(reader, 1000) != stale


def test_rebuild_feed_of_one_pinner(store: Store, feeds: HomeFeeds) -> None:
    world = random_world(store, seed=9, pins=30)
    u = list(world.follows)[1]
    feeds.shards.client_for(u).rpush(feed_key(u), entry(99, 1))
    assert rebuild_feed(store, feeds, u) is True
    assert feed_of(feeds, u) == world.oracle(u, 1000)


def test_feed_rebuild_chunks_do_the_sync_shard_by_shard_and_again_harmlessly(
    store: Store, feeds: HomeFeeds
) -> None:
    world = random_world(store, seed=13, pins=15)
    context = JobContext(store, lambda: feeds.shards)
    job = kind("feed-rebuild")

    def run(**params: object) -> dict[str, int]:
        checked = job.check(params)
        totals: dict[str, int] = {}
        for chunk in job.chunks(context, checked):
            for name, n in job.run_chunk(context, chunk, checked).items():
                totals[name] = totals.get(name, 0) + n
        return totals

    assert run(check=True)["feeds_checked"] == 0  # nobody active yet
    first = run(everyone=True, per_chunk=4)
    assert first == {"feeds_checked": 5, "feeds_repaired": 5, "feeds_missed": 0}
    assert {u: feed_of(feeds, u) for u in world.follows} == {
        u: world.oracle(u, 1000) for u in world.follows
    }
    assert run() == {"feeds_checked": 5, "feeds_repaired": 0, "feeds_missed": 0}
