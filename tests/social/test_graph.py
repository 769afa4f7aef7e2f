"""The follower graph on a real Redis (seed 004): edits, queries, pages, fan-out streams.

Each test runs on one instance (database 3) and on two instances (databases 1 and 2 of
the same server: virtual shards [0, 4095] and [4096, 8191]), so routing is checked:
``user(n)`` lives on the first instance, ``user(HIGH + n)`` on the second
(tests/shardstore/vshard_users.py).

Round trips are counted twice: what the graph reports (``shards.calls``) and what
redis-py actually writes to the sockets (``redis_round_trips``, by database).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
import redis

from shardstore import compose
from shardstore.mappings import Page
from shardstore.redis_shards import RedisShards, RedisTopology, vshard_of
from social import graph as gk
from social.graph import FollowerGraph

from .vshard_users import HIGH, USER, user

BOARD = 2


def board_of(owner: int, n: int = 1) -> int:
    """A board ID; its keys live with its owner's, whatever its own number."""
    return compose(2, BOARD, (owner % 100000) * 10 + n)


@pytest.fixture
def graph(redis_shards: RedisShards) -> FollowerGraph:
    return FollowerGraph(redis_shards)


def two(graph: FollowerGraph) -> bool:
    return len(graph.shards.clients()) == 2


def db_of(graph: FollowerGraph, user_id: int) -> int:
    return int(graph.shards.client_for(user_id).connection_pool.connection_kwargs["db"])


class Trips:
    """Round trips made inside a block: reported by the graph, and real ones by database."""

    def __init__(self, graph: FollowerGraph, real: Any) -> None:
        self.graph, self.real = graph, real

    def __enter__(self) -> Trips:
        self.reported0 = self.graph.shards.calls
        self.real0 = dict(self.real)
        return self

    def __exit__(self, *exc: object) -> None:
        self.reported = self.graph.shards.calls - self.reported0
        self.by_db = {db: n - self.real0.get(db, 0) for db, n in self.real.items()}
        self.by_db = {db: n for db, n in self.by_db.items() if n}


@pytest.fixture
def trips(graph: FollowerGraph, redis_round_trips: Any) -> Callable[[], Trips]:
    return lambda: Trips(graph, redis_round_trips)


def test_routing_by_virtual_shard(graph: FollowerGraph) -> None:
    low, high = user(5), user(HIGH + 5)
    assert vshard_of(low) < HIGH <= vshard_of(high)
    if two(graph):
        assert graph.shards.instance_for(low) == "r1"
        assert graph.shards.instance_for(high) == "r2"
        assert graph.shards.group([low, high, user(7)]) == {"r1": [low, user(7)], "r2": [high]}
    graph.edit().user_follow(low, high, True, 100).commit()
    assert graph.shards.client_for(low).zscore(gk.following_key(low), gk.member(high)) == 100
    assert graph.shards.client_for(high).zscore(gk.followers_key(high), gk.member(low)) == 100
    if two(graph):  # each key on its owner's instance only
        assert not graph.shards.client_for(high).exists(gk.following_key(low))
        assert not graph.shards.client_for(low).exists(gk.followers_key(high))


def test_edit_is_one_multi_per_instance(graph: FollowerGraph, trips: Callable[[], Trips]) -> None:
    a, b, owner = user(1), user(HIGH + 2), user(HIGH + 3)
    board = board_of(owner)
    edit = (
        graph.edit()
        .user_follow(a, b, True, 10)
        .implicit_follow(a, owner, True, 11)
        .board_follow(a, board, owner, True, 11)
        .board_unfollow(b, board, owner, True)
    )
    with trips() as t:
        edit.commit()
    dbs = {db_of(graph, a), db_of(graph, owner)}
    assert t.by_db == dict.fromkeys(dbs, 1)
    assert t.reported == len(dbs)


def test_edits_write_both_ends_and_undo(graph: FollowerGraph) -> None:
    a, owner = user(1), user(HIGH + 9)
    board = board_of(owner)
    ca, co = graph.shards.client_for(a), graph.shards.client_for(owner)
    graph.edit().implicit_follow(a, owner, True, 7).board_follow(a, board, owner, True, 7).commit()
    assert ca.zscore(gk.implicit_following_key(a), gk.member(owner)) == 7
    assert co.zscore(gk.implicit_followers_key(owner), gk.member(a)) == 7
    assert ca.smembers(gk.boards_followed_key(a)) == {gk.member(board).encode()}
    assert co.hgetall(gk.board_followers_key(board)) == {gk.member(a).encode(): b"7"}
    graph.edit().board_unfollow(a, board, owner, True).commit()
    assert ca.smembers(gk.boards_unfollowed_key(a)) == {gk.member(board).encode()}
    assert co.smembers(gk.board_unfollowers_key(board)) == {gk.member(a).encode()}
    (
        graph.edit()
        .implicit_follow(a, owner, False, 0)
        .board_follow(a, board, owner, False, 0)
        .board_unfollow(a, board, owner, False)
        .commit()
    )
    for client in (ca, co):
        assert client.keys("*") == []


def test_seed_004_follow_semantics(graph: FollowerGraph, trips: Callable[[], Trips]) -> None:
    andrea, bob, carl, dora = user(1), user(HIGH + 1), user(2), user(HIGH + 2)
    recipes, travel, later = board_of(bob, 1), board_of(bob, 2), board_of(bob, 3)

    # Andrea follows Bob: all his boards, current and future...
    graph.edit().user_follow(andrea, bob, True, 100).commit()
    assert graph.follows_user(andrea, bob) and not graph.follows_user(bob, andrea)
    assert graph.follows_board(andrea, recipes, bob)
    assert graph.follows_board(andrea, later, bob)  # a new board of a followed user
    # ...then unfollows one board.
    graph.edit().board_unfollow(andrea, travel, bob, True).commit()
    assert not graph.follows_board(andrea, travel, bob)
    assert graph.follows_board(andrea, recipes, bob)
    assert graph.follows_user(andrea, bob)

    # Carl follows Recipes without following Bob: an implicit follower of Bob.
    graph.edit().board_follow(carl, recipes, bob, True, 200).implicit_follow(
        carl, bob, True, 200
    ).commit()
    assert graph.follows_board(carl, recipes, bob)
    assert not graph.follows_board(carl, travel, bob)
    assert not graph.follows_user(carl, bob)

    # Dora follows Travel and Bob; she unfollows Bob: her explicit board follow stays.
    graph.edit().board_follow(dora, travel, bob, True, 300).implicit_follow(
        dora, bob, True, 300
    ).commit()
    graph.edit().user_follow(dora, bob, True, 301).commit()
    assert graph.follows_board(dora, recipes, bob)
    graph.edit().user_follow(dora, bob, False, 0).commit()
    assert not graph.follows_user(dora, bob)
    assert graph.follows_board(dora, travel, bob)
    assert not graph.follows_board(dora, recipes, bob)

    # nobody follows a stranger's board
    assert not graph.follows_board(user(50), recipes, bob)

    # each question: one round trip, to the asker's instance
    questions: list[Callable[[], bool]] = [
        lambda: graph.follows_user(andrea, bob),
        lambda: graph.follows_board(andrea, travel, bob),
        lambda: graph.follows_board(carl, recipes, bob),
    ]
    for question in questions:
        with trips() as t:
            question()
        assert t.reported == 1
        assert t.by_db == {db_of(graph, andrea): 1}


def test_followed_among_25_in_one_round_trip(
    graph: FollowerGraph, trips: Callable[[], Trips]
) -> None:
    me = user(HIGH + 77)
    candidates = [user(n) for n in range(1, 13)] + [user(HIGH + n) for n in range(1, 14)]
    random.Random(4).shuffle(candidates)
    followed = candidates[::3]
    edit = graph.edit()
    for i, c in enumerate(followed):
        edit.user_follow(me, c, True, 1000 + i)
    edit.commit()
    with trips() as t:
        assert graph.followed_among(me, candidates) == followed  # in the order asked
    assert t.reported == 1
    assert t.by_db == {db_of(graph, me): 1}
    assert graph.followed_among(me, []) == []
    assert graph.followed_among(user(3), candidates) == []


def test_counts(graph: FollowerGraph, trips: Callable[[], Trips]) -> None:
    bob = user(HIGH + 1)
    board = board_of(bob)
    explicit = [user(n) for n in range(1, 6)]  # follow Bob
    board_only = [user(HIGH + n) for n in range(10, 13)]  # follow the board only
    edit = graph.edit()
    for i, f in enumerate(explicit):
        edit.user_follow(f, bob, True, i)
    for i, f in enumerate(board_only):
        edit.board_follow(f, board, bob, True, 50 + i).implicit_follow(f, bob, True, 50 + i)
    edit.board_unfollow(explicit[0], board, bob, True)
    edit.board_unfollow(explicit[1], board, bob, True)
    edit.user_follow(bob, explicit[2], True, 99)
    edit.commit()
    with trips() as t:
        counts = graph.user_counts(bob)
    assert counts == {
        "following": 1,
        "followers": 5,
        "implicit_following": 0,
        "implicit_followers": 3,
    }
    assert t.reported == 1 and t.by_db == {db_of(graph, bob): 1}
    assert graph.user_counts(board_only[0])["implicit_following"] == 1
    with trips() as t:
        assert graph.board_follower_count(board, bob) == 3 + 5 - 2
    assert t.reported == 1 and t.by_db == {db_of(graph, bob): 1}
    assert graph.board_follower_count(board_of(bob, 2), bob) == 5
    assert graph.user_counts(user(999)) == dict.fromkeys(counts, 0)


def _oracle(scores: dict[int, int]) -> list[int]:
    return [m for s, m in sorted(((s, m) for m, s in scores.items()), reverse=True)]


def _walk(page: Callable[..., Page], owner: int, limit: int) -> list[Page]:
    pages, cursor = [], None
    while True:
        p = page(owner, limit=limit, cursor=cursor)
        pages.append(p)
        if p.cursor is None:
            return pages
        cursor = p.cursor
        assert len(pages) < 500


def test_pages_reverse_chronological(graph: FollowerGraph, trips: Callable[[], Trips]) -> None:
    bob = user(HIGH + 1)
    followers = {user(n): 1000 + n for n in range(1, 30)}  # distinct times
    following = {user(HIGH + n): 5000 - n for n in range(2, 12)}
    edit = graph.edit()
    for f, score in followers.items():
        edit.user_follow(f, bob, True, score)
    for f, score in following.items():
        edit.user_follow(bob, f, True, score)
    edit.commit()
    for limit in (1, 4, 7, 29, 50):
        pages = _walk(graph.followers_page, bob, limit)
        assert [i for p in pages for i in p.ids] == _oracle(followers)
        assert all(len(p.ids) == limit for p in pages[:-1])
        pages = _walk(graph.following_page, bob, limit)
        assert [i for p in pages for i in p.ids] == _oracle(following)
    first = graph.followers_page(bob, limit=5)
    assert graph.followers_page(user(5000)) == Page([], None)
    # a follower added between pages does not shift the next page
    late = user(HIGH + 500)
    graph.edit().user_follow(late, bob, True, 9999).commit()
    second = graph.followers_page(bob, limit=5, cursor=first.cursor)
    assert second.ids == _oracle(followers)[5:10]


def test_each_page_is_one_round_trip(graph: FollowerGraph, trips: Callable[[], Trips]) -> None:
    bob = user(HIGH + 1)
    edit = graph.edit()
    for n in range(1, 30):
        edit.user_follow(user(n), bob, True, 1000 + n)  # distinct times, no ties
    edit.commit()
    with trips() as t:
        first = graph.followers_page(bob, limit=5)
    assert t.reported == 1 and t.by_db == {db_of(graph, bob): 1}
    with trips() as t:
        second = graph.followers_page(bob, limit=5, cursor=first.cursor)
    assert second.ids == [user(n) for n in range(24, 19, -1)]
    assert t.by_db == {db_of(graph, bob): 1}, "real round trips for a page after a cursor"
    assert t.reported == 1


@pytest.mark.parametrize("limit", [1, 2, 3, 5, 8, 50])
def test_pages_with_tied_scores(
    graph: FollowerGraph, trips: Callable[[], Trips], limit: int
) -> None:
    """Many follows in the same microsecond (a bulk import, a rebuild): ties are broken by
    ID, every follower appears exactly once, in (score, id) descending order. The IDs are
    on shards 0, 1 and 300, so their decimal strings differ in length (Redis orders tied
    members by their bytes, which is not numeric order)."""
    bob = user(HIGH + 1)
    followers: dict[int, int] = {}
    for shard in (0, 1, 300):
        for n in range(1, 8):
            followers[compose(shard, USER, n)] = 100 + n % 2  # two scores only
    followers[compose(1, USER, 20)] = 50
    graph_edit = graph.edit()
    for f, score in followers.items():
        graph_edit.user_follow(f, bob, True, score)
    graph_edit.commit()
    pages = _walk(graph.followers_page, bob, limit)
    got = [i for p in pages for i in p.ids]
    assert sorted(got) == sorted(followers), "a follower is missing or repeated"
    assert got == _oracle(followers)


def test_board_followers_stream(graph: FollowerGraph) -> None:
    owner = user(HIGH + 3)
    board = board_of(owner)
    explicit = [user(n, shard=3) for n in range(1, 1201)]  # follow the board
    owner_followers = [user(n, shard=4) for n in range(1, 1301)]  # follow the owner
    unfollowers = owner_followers[::13]  # 100 of them unfollowed this board
    bystander = user(HIGH + 4)  # unfollowed another board of the owner
    edit = graph.edit()
    for i, f in enumerate(explicit):
        edit.board_follow(f, board, owner, True, i)
    for i, f in enumerate(owner_followers):
        edit.user_follow(f, owner, True, i)
    for f in unfollowers:
        edit.board_unfollow(f, board, owner, True)
    edit.user_follow(bystander, owner, True, 1).board_unfollow(
        bystander, board_of(owner, 2), owner, True
    )
    edit.commit()
    expected = set(explicit) | set(owner_followers) | {bystander}
    expected -= set(unfollowers)
    assert len(expected) == 1200 + 1200 + 1
    chunks = list(graph.board_followers(board, owner, chunk=1000))
    streamed = [f for c in chunks for f in c]
    assert len(streamed) == len(set(streamed)), "a follower is streamed twice"
    assert set(streamed) == expected
    assert all(0 < len(c) <= 1000 for c in chunks), [len(c) for c in chunks]
    assert graph.board_follower_count(board, owner) == len(expected)
    # another board: every follower of the owner, no explicit followers
    other = list(graph.board_followers(board_of(owner, 3), owner, chunk=1000))
    assert sorted(f for c in other for f in c) == sorted([*owner_followers, bystander])
    assert [len(c) for c in other] == [1000, 301]
    assert list(graph.board_followers(board_of(user(77)), user(77))) == []


def test_board_followers_small_chunks(graph: FollowerGraph) -> None:
    owner = user(1)
    board = board_of(owner)
    edit = graph.edit()
    for n in range(1, 8):
        edit.board_follow(user(HIGH + n), board, owner, True, n)
    for n in range(10, 21):
        edit.user_follow(user(n), owner, True, n)
    edit.board_unfollow(user(10), board, owner, True)
    edit.commit()
    chunks = list(graph.board_followers(board, owner, chunk=3))
    streamed = [f for c in chunks for f in c]
    assert sorted(streamed) == sorted(
        [user(HIGH + n) for n in range(1, 8)] + [user(n) for n in range(11, 21)]
    )
    assert all(len(c) <= 3 for c in chunks), [len(c) for c in chunks]


def test_queries_on_an_unreachable_instance_raise(redis_db: Callable[[int], str]) -> None:
    """No silent empty answer when Redis is down: a typed redis error reaches the caller."""
    shards = RedisShards(RedisTopology.single("redis://127.0.0.1:1/0"))
    try:
        with pytest.raises(redis.ConnectionError):
            FollowerGraph(shards).follows_user(user(1), user(2))
    finally:
        shards.close()
