"""Notifications on a real Redis: one entry per event however often it is delivered,
capped lists, paging through entries of one microsecond, the unread count and the read
mark, forgetting, rebuilding under WATCH.

Runs on one instance (database 3) and on two (databases 1 and 2; ``user(n)`` on the
first, ``user(HIGH + n)`` on the second: tests/shardstore/vshard_users.py).
"""

from __future__ import annotations

import pytest

from shardstore import InvalidCursor, cursors
from shardstore.redis_shards import RedisShards
from social.notifications import Entry, Notifications, list_key, newest_first

from .vshard_users import HIGH, user

T = 1_764_000_000_000_000  # a time in microseconds


@pytest.fixture
def shards(redis_shards: RedisShards) -> RedisShards:
    return redis_shards


def like(actor: int, pin: int, at: int) -> Entry:
    return Entry(at, "like", actor, pin)


@pytest.mark.parametrize("who", [1, HIGH + 1])
def test_an_event_delivered_again_is_one_entry_and_only_moves_forward(
    shards: RedisShards, who: int
) -> None:
    notes, b = Notifications(shards), user(who)
    for _ in range(3):
        notes.add(b, like(7, 42, T))
    notes.add(b, like(7, 42, T - 10))  # a late delivery of an older like: nothing
    assert notes.entries(b) == [like(7, 42, T)]
    notes.add(b, like(7, 42, T + 10))  # liked again after an unlike: moved up
    notes.add(b, Entry(T + 5, "save", 7, 42))  # another kind is another entry
    assert notes.entries(b) == [like(7, 42, T + 10), Entry(T + 5, "save", 7, 42)]
    assert notes.entries(user(2)) == []  # nobody else's


def test_a_list_keeps_the_newest_length(shards: RedisShards) -> None:
    notes, b = Notifications(shards, length=5), user(HIGH + 3)
    for n in range(8):
        notes.add(b, like(n, 100 + n, T + n))
    assert [e.actor_id for e in notes.entries(b)] == [7, 6, 5, 4, 3]
    notes.add(b, like(0, 100, T))  # older than all it keeps: gone at once
    assert len(notes.entries(b)) == 5


def test_pages_walk_every_entry_once_even_within_one_microsecond(shards: RedisShards) -> None:
    notes, b = Notifications(shards), user(4)
    for n in range(7):
        notes.add(b, like(n, 100, T + (n // 3)))  # times T, T, T, T+1, T+1, T+1, T+2
    for limit in (1, 2, 3, 7, 8):
        seen, cursor = [], None
        while True:
            page = notes.page(b, limit=limit, cursor=cursor)
            seen += page.entries
            if page.cursor is None:
                break
            cursor = page.cursor
            notes.add(b, like(99, 100 + limit, T + 100))  # newer ones do not shift older
        assert [e for e in seen if e.actor_id != 99] == [
            e for e in notes.entries(b) if e.actor_id != 99
        ]
        assert len(seen) == len({e.member for e in seen}), limit
    with pytest.raises(InvalidCursor):
        notes.page(b, cursor=cursors.encode(T, 10**6))  # skips more than a list holds


def test_unread_counts_what_is_newer_than_the_mark_which_only_moves_forward(
    shards: RedisShards,
) -> None:
    notes, b = Notifications(shards), user(HIGH + 5)
    assert notes.unread(b) == 0 and notes.mark_read(b) == 0  # nothing, nothing to mark
    for n in range(4):
        notes.add(b, like(n, 100, T + n))
    assert notes.unread(b) == 4 and notes.page(b).read_up_to == 0
    assert notes.mark_read(b, T + 1) == T + 1
    assert notes.unread(b) == 2
    assert notes.mark_read(b, T) == T + 1  # never back
    assert notes.unread(b) == 2 and notes.page(b).read_up_to == T + 1
    assert notes.mark_read(b) == T + 3  # up to the newest
    assert notes.unread(b) == 0
    notes.add(b, like(0, 100, T + 50))  # liked again: unread again
    assert notes.unread(b) == 1


def test_forget_clear_and_replace(shards: RedisShards) -> None:
    notes, b = Notifications(shards), user(6)
    notes.add(b, like(1, 100, T))
    notes.add(b, Entry(T + 1, "comment", 2, 500))
    notes.add(b, like(3, 101, T + 2))
    assert notes.forget(b, [100, 500]) == 2
    assert notes.entries(b) == [like(3, 101, T + 2)]
    assert notes.forget(b, [100]) == 0

    calls = []

    def compute() -> list[Entry]:
        calls.append(1)
        if len(calls) == 1:  # a delivery lands while the rebuild computes
            shards.client_for(b).zadd(list_key(b), {like(9, 9, T + 9).member: T + 9})
        return [like(1, 100, T), like(9, 9, T + 9)]

    assert notes.replace(b, compute) is True
    assert len(calls) == 2  # computed again after the delivery
    assert notes.entries(b) == [like(9, 9, T + 9), like(1, 100, T)]
    notes.mark_read(b)
    notes.clear(b)
    assert notes.entries(b) == [] and notes.page(b).read_up_to == 0


def test_newest_first_is_the_order_redis_keeps(shards: RedisShards) -> None:
    notes, b = Notifications(shards), user(HIGH + 7)
    made = [like(actor, 5, T + actor % 2) for actor in (9, 10, 100, 11, 2, 1000)]
    made.append(Entry(T, "follow", 10, b))
    for entry in made:
        notes.add(b, entry)
    assert notes.entries(b) == newest_first(made)
    notes.replace(b, lambda: list(reversed(made)))
    assert notes.entries(b) == newest_first(made)


def test_a_kind_is_a_word(shards: RedisShards) -> None:
    with pytest.raises(ValueError, match="kind"):
        Entry(T, "li:ke", 1, 2)
