"""Home feeds on a real Redis: fan-out pushes, idempotent batches, paging, merges.

Runs on one instance (database 3) and on two (databases 1 and 2; ``user(n)`` on the
first, ``user(HIGH + n)`` on the second: tests/shardstore/vshard_users.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from shardstore import compose
from shardstore.redis_shards import RedisShards
from social.feeds import FeedPage, HomeFeeds, entry, feed_key

from .vshard_users import HIGH, user

PIN = 1


def pin(n: int) -> int:
    return compose(6, PIN, n)


@pytest.fixture
def shards(redis_shards: RedisShards) -> RedisShards:
    return redis_shards


def feeds_of(shards: RedisShards, length: int = 1000) -> HomeFeeds:
    return HomeFeeds(shards, length=length)


def walk(feeds: HomeFeeds, user_id: int, limit: int) -> list[FeedPage]:
    pages, cursor = [], None
    while True:
        page = feeds.page(user_id, limit=limit, cursor=cursor)
        pages.append(page)
        if page.cursor is None:
            return pages
        cursor = page.cursor
        assert len(pages) < 500


def test_mark_seen(shards: RedisShards) -> None:
    feeds = feeds_of(shards)
    a = user(HIGH + 1)
    assert feeds.mark_seen(a) is False  # away (never seen): the feed needs a rebuild
    assert feeds.mark_seen(a) is True
    assert feeds.mark_seen(a) is True
    assert feeds.mark_seen(user(2)) is False


def test_push_only_to_active_pinners_capped_newest_first(shards: RedisShards) -> None:
    feeds = feeds_of(shards, length=5)
    active = [user(1), user(HIGH + 1), user(2)]
    away = [user(3), user(HIGH + 3)]
    for u in active:
        feeds.mark_seen(u)
    everyone = active + away
    for n in range(1, 9):
        assert feeds.push(pin(n), 100 + n, everyone, batch="b0") == len(active)
    for u in active:
        assert feeds.entries(u) == [(100 + n, pin(n)) for n in range(8, 3, -1)]
        assert feeds.page(u) == FeedPage([pin(n) for n in range(8, 3, -1)], None, {})
        assert shards.client_for(u).llen(feed_key(u)) == 5
    for u in away:
        assert feeds.entries(u) == []
        assert feeds.page(u) == FeedPage([], None, {})
        assert not shards.client_for(u).exists(feed_key(u))


def test_a_retried_batch_adds_nothing_twice(shards: RedisShards) -> None:
    feeds = feeds_of(shards)
    users = [user(1), user(HIGH + 1), user(HIGH + 2)]
    for u in users:
        feeds.mark_seen(u)
    assert feeds.push(pin(1), 10, users, batch="0") == 3
    assert feeds.push(pin(1), 10, users, batch="0") == 0  # the retry
    assert feeds.push(pin(1), 10, users[:1], batch="0") == 0
    for u in users:
        assert feeds.entries(u) == [(10, pin(1))]
    # another batch of the same pin reaches other followers; another pin is its own
    late = user(5)
    feeds.mark_seen(late)
    assert feeds.push(pin(1), 10, [late], batch="1") == 1
    assert feeds.push(pin(2), 20, users, batch="0") == 3
    assert feeds.entries(late) == [(10, pin(1))]
    for u in users:
        assert feeds.entries(u) == [(20, pin(2)), (10, pin(1))]


def test_a_pin_is_in_a_feed_once_whatever_the_batching(shards: RedisShards) -> None:
    """Fan-out of one pin under other batch names (a re-run fan-out whose followers moved
    between batches) places it once, at the head or deeper in the feed."""
    feeds = feeds_of(shards)
    users = [user(1), user(HIGH + 1)]
    for u in users:
        feeds.mark_seen(u)
    assert feeds.push(pin(1), 10, users, batch="1") == 2
    assert feeds.push(pin(1), 10, users, batch="2") == 0  # it is the head
    assert feeds.push(pin(2), 20, users, batch="1") == 2
    assert feeds.push(pin(1), 10, users, batch="3") == 0  # it is below the head
    assert feeds.push(pin(3), 5, users, batch="1") == 2  # an older pin: the tail
    assert feeds.push(pin(3), 5, users, batch="4") == 0
    for u in users:
        assert feeds.entries(u) == [(20, pin(2)), (10, pin(1)), (5, pin(3))]


def test_push_is_one_call_per_instance(shards: RedisShards, redis_round_trips: Any) -> None:
    feeds = feeds_of(shards)
    users = [user(n) for n in range(1, 40)] + [user(HIGH + n) for n in range(1, 40)]
    for u in users:
        feeds.mark_seen(u)
    feeds.push(pin(1), 1, users, batch="warm")  # loads the script on each instance
    before, calls = dict(redis_round_trips), shards.calls
    assert feeds.push(pin(2), 2, users, batch="0") == len(users)
    real = {db: n - before.get(db, 0) for db, n in redis_round_trips.items()}
    real = {db: n for db, n in real.items() if n}
    dbs = {int(c.connection_pool.connection_kwargs["db"]) for c in shards.clients().values()}
    assert real == dict.fromkeys(dbs, 1)
    assert shards.calls - calls == len(dbs)
    before = dict(redis_round_trips)
    feeds.page(users[0])
    assert sum(redis_round_trips.values()) - sum(before.values()) == 1


def test_pages_stay_right_while_pins_arrive(shards: RedisShards) -> None:
    feeds = feeds_of(shards)
    reader = user(HIGH + 8)
    feeds.mark_seen(reader)
    for n in range(1, 13):
        feeds.push(pin(n), 1000 + n, [reader], batch="0")
    first = feeds.page(reader, limit=5)
    assert first.ids == [pin(n) for n in range(12, 7, -1)]
    for n in range(13, 16):  # new pins pushed between pages
        feeds.push(pin(n), 1000 + n, [reader], batch="0")
    second = feeds.page(reader, limit=5, cursor=first.cursor)
    assert second.ids == [pin(n) for n in range(7, 2, -1)]
    feeds.push(pin(16), 1016, [reader], batch="0")
    third = feeds.page(reader, limit=5, cursor=second.cursor)
    assert third == FeedPage([pin(2), pin(1)], None, {})
    # a fresh walk sees everything once, newest first
    pages = walk(feeds, reader, 4)
    assert [i for p in pages for i in p.ids] == [pin(n) for n in range(16, 0, -1)]
    assert all(len(p.ids) == 4 for p in pages)


def test_pins_fanned_out_out_of_order_still_read_newest_first(shards: RedisShards) -> None:
    """Fan-out tasks of pins made close together finish in any order (several workers,
    retries). The feed still reads newest first and a walk with cursors sees every pin."""
    feeds = feeds_of(shards)
    reader = user(3)
    feeds.mark_seen(reader)
    order = [3, 1, 5, 2, 4]  # the order the batches happened to run in
    for n in order:
        feeds.push(pin(n), 1000 + n, [reader], batch="0")
    newest_first = [pin(n) for n in range(5, 0, -1)]
    assert feeds.page(reader).ids == newest_first
    for limit in (1, 2, 3):
        assert [i for p in walk(feeds, reader, limit) for i in p.ids] == newest_first


def test_merge_keeps_order_dedupes_and_caps(shards: RedisShards) -> None:
    feeds = feeds_of(shards, length=6)
    reader = user(HIGH + 2)
    feeds.mark_seen(reader)
    for n in (2, 4, 6):
        feeds.push(pin(n), 100 + n, [reader], batch="0")
    feeds.merge(reader, [(103, pin(3)), (105, pin(5)), (104, pin(4)), (101, pin(1))])
    assert feeds.entries(reader) == [(100 + n, pin(n)) for n in range(6, 0, -1)]
    # merging more than fits keeps the newest; a pin met again keeps its newest time
    feeds.merge(reader, [(110, pin(10)), (99, pin(0)), (120, pin(2))])
    assert feeds.entries(reader) == [
        (120, pin(2)),
        (110, pin(10)),
        (106, pin(6)),
        (105, pin(5)),
        (104, pin(4)),
        (103, pin(3)),
    ]
    assert feeds.page(reader, limit=3).ids == [pin(2), pin(10), pin(6)]
    # a merge into an empty feed
    other = user(9)
    feeds.merge(other, [(5, pin(5)), (7, pin(7))])
    assert feeds.entries(other) == [(7, pin(7)), (5, pin(5))]
    feeds.merge(other, [])
    assert feeds.entries(other) == [(7, pin(7)), (5, pin(5))]


def test_entries_name_their_pins_boards_through_every_rewrite(shards: RedisShards) -> None:
    feeds = feeds_of(shards, length=10)
    reader = user(HIGH + 6)
    feeds.mark_seen(reader)
    board, other = compose(6, 2, 1), compose(6, 2, 2)
    feeds.push(pin(1), 101, [reader], batch="0", board_id=board)
    feeds.push(pin(2), 102, [reader], batch="0")  # a batch queued before boards were named
    assert feeds.page(reader) == FeedPage([pin(2), pin(1)], None, {pin(1): board})
    feeds.merge(reader, [(103, pin(3)), (100, pin(0))], {pin(3): other})
    feeds.remove_pins(reader, {pin(0)})
    named = {pin(1): board, pin(3): other}  # kept by the merge and the removal
    assert feeds.page(reader) == FeedPage([pin(3), pin(2), pin(1)], None, named)
    assert feeds.page(reader, limit=1, cursor=feeds.page(reader, limit=2).cursor).boards == {
        pin(1): board
    }
    # A feed written before boards were named: its entry and a new one are the same pin.
    shards.client_for(reader).lset(feed_key(reader), 0, entry(pin(3), 103))
    assert feeds.push(pin(3), 103, [reader], batch="1", board_id=other) == 0
    assert feeds.entries(reader) == [(103, pin(3)), (102, pin(2)), (101, pin(1))]
    feeds.replace(reader, [(103, pin(3)), (101, pin(1))], {pin(3): board})  # moved since
    assert feeds.page(reader).boards == {pin(3): board, pin(1): board}


def test_remove_pins_and_replace(shards: RedisShards) -> None:
    feeds = feeds_of(shards)
    reader = user(HIGH + 5)
    feeds.replace(reader, [(100 + n, pin(n)) for n in range(1, 8)])
    assert feeds.page(reader).ids == [pin(n) for n in range(7, 0, -1)]
    feeds.remove_pins(reader, {pin(2), pin(5), pin(99)})
    assert feeds.page(reader).ids == [pin(7), pin(6), pin(4), pin(3), pin(1)]
    feeds.replace(reader, [(1, pin(40)), (3, pin(41)), (2, pin(42))])
    assert feeds.entries(reader) == [(3, pin(41)), (2, pin(42)), (1, pin(40))]
    feeds.remove_pins(reader, {pin(40), pin(41), pin(42)})
    assert feeds.page(reader) == FeedPage([], None, {})
    feeds.replace(reader, [])
    assert not shards.client_for(reader).exists(feed_key(reader))
    # replace keeps the cap
    small = feeds_of(shards, length=3)
    small.replace(reader, [(n, pin(n)) for n in range(1, 10)])
    assert small.entries(reader) == [(9, pin(9)), (8, pin(8)), (7, pin(7))]


def test_the_sites_newest_pins_in_order_once_paged_and_capped(shards: RedisShards) -> None:
    feeds = feeds_of(shards, length=5)
    for n in (1, 3, 2, 4, 3):  # 2 arrives late, 3 twice (a retried task)
        feeds.add_recent(pin(n), 100 + n)
    assert feeds.recent_page().ids == [pin(4), pin(3), pin(2), pin(1)]

    first = feeds.recent_page(limit=2)
    assert first.ids == [pin(4), pin(3)] and first.cursor is not None
    feeds.add_recent(pin(5), 105)  # arrives between pages: no repeat, no gap
    last = feeds.recent_page(limit=2, cursor=first.cursor)
    assert last.ids == [pin(2), pin(1)] and last.cursor is None

    feeds.add_recent(pin(6), 106)
    assert feeds.recent_page().ids == [pin(n) for n in (6, 5, 4, 3, 2)]  # capped at 5
    feeds.remove_recent([pin(5), pin(4)])
    assert feeds.recent_page().ids == [pin(6), pin(3), pin(2)]
