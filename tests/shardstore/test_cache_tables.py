"""Cached tables: CachedStore over the contract store (sqlite and mysql), with pools all in
process memory or all on a real memcached.

What is checked: a warm read costs no SQL and one multi-get per pool; cached pages and
cursors are the store's own; writes invalidate (or append) after they commit; the fill
protocol never stores a value read before a write that invalidated it.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from shardstore import Page, Store, compose
from shardstore.cache import CachedStore, LocalPool
from shardstore.cache import tables as cache_tables
from shardstore.cache.readthrough import FILLING, invalidate, read_through


@pytest.fixture
def store(plain_store: Store) -> Store:
    """The cache's own tests put their pools in front of the plain store."""
    return plain_store


PIN, BOARD, USER = 1, 2, 3
POOL_NAMES = ("users", "boards", "pins", "lists")
_names = itertools.count(1)


@pytest.fixture(params=["local", "memcached"])
def pools(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.param == "local":
        return {name: LocalPool(name) for name in POOL_NAMES}
    make: Callable[[str], Any] = request.getfixturevalue("memcached_pool")
    made = {name: make(name) for name in POOL_NAMES}
    # IDs repeat from test to test (fresh shards each time): start from an empty cache.
    made["lists"].clear()
    return made


@pytest.fixture
def cached(store: Store, pools: dict[str, Any]) -> CachedStore:
    return CachedStore(store, pools)


def walk(mapping: Any, from_id: int, limit: int, *, oldest_first: bool = False) -> list[Page]:
    pages, cursor = [], None
    while True:
        page = mapping.page(from_id, limit=limit, cursor=cursor, oldest_first=oldest_first)
        pages.append(page)
        if page.cursor is None:
            return pages
        cursor = page.cursor
        assert len(pages) < 1000


def calls(pools: dict[str, Any]) -> dict[str, int]:
    return {name: pool.stats.calls for name, pool in pools.items()}


def delta(before: dict[str, int], pools: dict[str, Any]) -> dict[str, int]:
    return {n: c - before[n] for n, c in calls(pools).items() if c != before[n]}


def fill_board(store: Store, board: int, n: int, *, shard: int = 5) -> list[int]:
    """``n`` pins on ``board``, with ties of sequence (three pins share each sequence)."""
    pins = [compose(shard, PIN, local) for local in range(1, n + 1)]
    for i, pin in enumerate(pins):
        store.mapping("board_has_pins").add(board, pin, sequence=1000 + i // 3)
    return pins


# -- warm reads cost no SQL ----------------------------------------------------------


def test_warm_object_with_counts_costs_no_sql(
    store: Store, cached: CachedStore, pools: dict[str, Any]
) -> None:
    board = store.objects("board").create(3, {"title": "Recipes", "owner_id": 1})
    fill_board(store, board, 4, shard=3)
    store.mapping("board_followed_by_users")  # (read-only inverse: counted through its forward)
    expected = store.objects("board").get(board, counts=("board_has_pins",))
    assert expected is not None and expected["counts"] == {"board_has_pins": 4}

    with store.count_queries() as cold:
        assert cached.objects("board").get(board, counts=("board_has_pins",)) == expected
    assert cold.count == 1  # the object and its count in one query
    before = calls(pools)
    with store.count_queries() as warm:
        assert cached.objects("board").get(board, counts=("board_has_pins",)) == expected
    assert warm.count == 0
    assert delta(before, pools) == {"boards": 1}  # one get: the object holds its counts
    assert pools["boards"].stats.hits >= 1


def test_warm_get_many_across_shards_and_absent_ids(
    store: Store, cached: CachedStore, pools: dict[str, Any]
) -> None:
    pins = store.objects("pin")
    a = pins.create(1, {"title": "a"})
    b = pins.create(9, {"title": "b"})
    c = pins.create(9, {"title": "c"})
    absent = compose(4, PIN, 77)
    wanted = [c, absent, a, b, a]
    expected = pins.get_many(wanted)
    assert [o["id"] for o in expected] == [c, a, b, a]
    with store.count_queries() as cold:
        assert cached.objects("pin").get_many(wanted) == expected
    # One statement per host on MySQL (a UNION ALL over its shards), else one per shard
    # touched (1, 9 and the absent ID's 4).
    hosts = {store.topology.master_of(shard) for shard in (1, 9, 4)}
    assert cold.count == (len(hosts) if store.backend(1).spans_shards else 3)
    before = calls(pools)
    with store.count_queries() as warm:
        assert cached.objects("pin").get_many(wanted) == expected
        assert cached.objects("pin").get(absent) is None
    assert warm.count == 0
    assert delta(before, pools) == {"pins": 2}


def test_mapping_pages_equal_the_store_pages(
    store: Store, cached: CachedStore, pools: dict[str, Any]
) -> None:
    board = compose(5, BOARD, 1)
    fill_board(store, board, 23)
    mapping = cached.mapping("board_has_pins")
    for limit in (1, 2, 3, 4, 7, 23, 50):
        for oldest_first in (False, True):
            want = walk(store.mapping("board_has_pins"), board, limit, oldest_first=oldest_first)
            assert walk(mapping, board, limit, oldest_first=oldest_first) == want
            before = calls(pools)
            with store.count_queries() as warm:
                assert walk(mapping, board, limit, oldest_first=oldest_first) == want
            assert warm.count == 0, (limit, oldest_first)
            assert delta(before, pools) == {"lists": len(want)}  # one multi-get per page
    # an empty list, and a list of one
    empty, single = compose(5, BOARD, 2), compose(5, BOARD, 3)
    store.mapping("board_has_pins").add(single, compose(5, PIN, 500), sequence=1)
    for from_id in (empty, single):
        one_page = store.mapping("board_has_pins").page(from_id)
        assert mapping.page(from_id) == one_page
        with store.count_queries() as warm:
            assert mapping.page(from_id) == one_page
            assert mapping.page(from_id, oldest_first=True) == one_page
        assert warm.count == 0


def test_cursors_are_interchangeable_with_the_store(store: Store, cached: CachedStore) -> None:
    board = compose(5, BOARD, 1)
    fill_board(store, board, 10)
    first = cached.mapping("board_has_pins").page(board, limit=4)
    assert first == store.mapping("board_has_pins").page(board, limit=4)
    assert first.cursor is not None
    assert cached.mapping("board_has_pins").page(
        board, limit=4, cursor=first.cursor
    ) == store.mapping("board_has_pins").page(board, limit=4, cursor=first.cursor)


def test_page_many_warm(store: Store, cached: CachedStore, pools: dict[str, Any]) -> None:
    boards = [compose(2, BOARD, 1), compose(2, BOARD, 2), compose(11, BOARD, 1)]
    for i, board in enumerate(boards):
        for local in range(1, 4 + i):
            store.mapping("board_has_pins").add(
                board, compose(2, PIN, 10 * i + local), sequence=local
            )
    expected = store.mapping("board_has_pins").page_many(boards, limit=2)
    with store.count_queries() as cold:
        assert cached.mapping("board_has_pins").page_many(boards, limit=2) == expected
    assert cold.count == 2  # one per shard
    before = calls(pools)
    with store.count_queries() as warm:
        assert cached.mapping("board_has_pins").page_many(boards, limit=2) == expected
    assert warm.count == 0
    assert delta(before, pools) == {"lists": 1}


def test_counts_lookups_and_edges_warm(
    store: Store, cached: CachedStore, pools: dict[str, Any]
) -> None:
    user = store.objects("user").create(6, {"username": "ada"})
    other = compose(12, USER, 3)
    store.lookup("username").insert("Ada", user)
    follows = store.mapping("user_follows_users")
    follows.add(user, other, sequence=5)
    board = compose(6, BOARD, 1)
    pin = compose(6, PIN, 1)
    store.mapping("board_has_pins").add(board, pin, sequence=1)

    def read() -> tuple[Any, ...]:
        return (
            cached.mapping("user_follows_users").count(user),
            cached.mapping("user_followed_by_users").count_many([other, user]),
            cached.lookup("username").get("ada"),
            cached.lookup("username").get("ADA"),
            cached.lookup("username").get("nobody"),
            cached.mapping("user_follows_users").contains(user, other),
            cached.mapping("user_follows_users").contains(other, user),
            cached.edges_exist(
                [
                    ("user_follows_users", user, other),
                    ("board_has_pins", board, pin),
                    ("pin_owned_by_board", pin, board),
                    ("board_has_pins", board, compose(6, PIN, 2)),
                ]
            ),
        )

    expected = (
        1,
        {other: 1, user: 0},
        user,
        user,
        None,
        True,
        False,
        {
            ("user_follows_users", user, other),
            ("board_has_pins", board, pin),
            ("pin_owned_by_board", pin, board),
        },
    )
    assert read() == expected
    assert store.edges_exist([("user_follows_users", user, other)]) == {
        ("user_follows_users", user, other)
    }
    before = calls(pools)
    with store.count_queries() as warm:
        assert read() == expected
    assert warm.count == 0
    # count, count_many, contains (x2), edges_exist: one multi-get each; 3 lookups
    assert delta(before, pools) == {"lists": 5, "users": 3}


# -- invalidation ---------------------------------------------------------------------


def test_object_writes_invalidate(store: Store, cached: CachedStore) -> None:
    pins = cached.objects("pin")
    pin = pins.create(4, {"title": "old"})
    assert pins.get(pin)["title"] == "old"  # type: ignore[index]
    pins.update(pin, {"title": "new"})
    assert pins.get(pin)["title"] == "new"  # type: ignore[index]
    pins.update(pin, lambda data: data.update(note="x"))
    assert pins.get(pin) == {"id": pin, "title": "new", "note": "x"}
    assert pins.delete(pin) is True
    assert pins.get(pin) is None
    assert pins.get(pin, include_inactive=True)["active"] is False  # type: ignore[index]
    assert pins.delete(pin, hard=True) is True
    assert pins.get(pin, include_inactive=True) is None
    # an ID read while absent, then created: the cached absence is dropped
    later = compose(4, PIN, 2)
    assert pins.get(later) is None
    assert pins.create(4, {"title": "later"}) == later
    assert pins.get(later) == {"id": later, "title": "later"}


def test_mapping_writes_invalidate_lists_counts_and_edges(
    store: Store, cached: CachedStore
) -> None:
    board = store.objects("board").create(7, {"title": "b"})
    has_pins = cached.mapping("board_has_pins")
    owned_by = cached.mapping("pin_owned_by_board")
    a, b, c = (compose(7, PIN, n) for n in (1, 2, 3))
    has_pins.add(board, a, sequence=10)
    has_pins.add(board, b, sequence=20)

    def state() -> tuple[Any, ...]:
        return (
            has_pins.page(board),
            has_pins.page(board, oldest_first=True),
            has_pins.count(board),
            has_pins.contains(board, c),
            owned_by.page(c),
            owned_by.count(c),
            cached.objects("board").get(board, counts=("board_has_pins",))["counts"],  # type: ignore[index]
        )

    def uncached() -> tuple[Any, ...]:
        raw = store.mapping("board_has_pins")
        return (
            raw.page(board),
            raw.page(board, oldest_first=True),
            raw.count(board),
            raw.contains(board, c),
            store.mapping("pin_owned_by_board").page(c),
            store.mapping("pin_owned_by_board").count(c),
            store.objects("board").get(board, counts=("board_has_pins",))["counts"],  # type: ignore[index]
        )

    assert state() == uncached()
    assert has_pins.add(board, c, sequence=15) is True  # lands in the middle by sequence
    assert state() == uncached()
    assert state()[0] == Page([b, c, a], None)
    with store.count_queries() as warm:
        state()
    assert warm.count == 0  # the append kept the list warm
    assert has_pins.add(board, c, sequence=99) is False  # already there: nothing changes
    assert state() == uncached()
    assert has_pins.remove(board, c) is True
    assert state() == uncached()
    assert state()[0] == Page([b, a], None)
    assert has_pins.remove(board, c) is False
    assert state() == uncached()
    assert has_pins.add(board, c, sequence=30) is True  # back again, now newest
    assert state() == uncached()
    assert state()[0] == Page([c, b, a], None)


def test_an_edge_refreshes_the_cached_counts_of_the_objects_at_both_ends(
    store: Store, cached: CachedStore
) -> None:
    user = store.objects("user").create(2, {"username": "ann"})
    pin = store.objects("pin").create(6, {"title": "p"})
    likes, liked_by = ("user_likes_pins",), ("pin_liked_by_users",)

    def counts() -> tuple[Any, Any]:
        u = cached.objects("user").get(user, counts=likes)
        p = cached.objects("pin").get(pin, counts=liked_by)
        return u["counts"], p["counts"]  # type: ignore[index]

    assert counts() == ({"user_likes_pins": 0}, {"pin_liked_by_users": 0})  # now cached
    cached.mapping("user_likes_pins").add(user, pin)
    assert counts() == ({"user_likes_pins": 1}, {"pin_liked_by_users": 1})
    cached.mapping("user_likes_pins").remove(user, pin)
    assert counts() == ({"user_likes_pins": 0}, {"pin_liked_by_users": 0})


def test_lookup_writes_invalidate(store: Store, cached: CachedStore) -> None:
    user = store.objects("user").create(2, {})
    names = cached.lookup("username")
    assert names.get("grace") is None  # cached as absent
    names.insert("Grace", user)
    assert names.get("grace") == user
    assert names.delete("grace", user) is True
    assert names.get("GRACE") is None


# -- the fill protocol ---------------------------------------------------------------


def _key() -> str:
    return f"t{uuid.uuid4().hex[:12]}:k{next(_names)}"


def test_write_during_fill_is_not_overwritten_by_the_stale_read(pools: dict[str, Any]) -> None:
    pool = pools["pins"]
    key = _key()

    def load(missing: list[str]) -> dict[str, bytes]:
        assert pool.get_many([key]).get(key, b"").startswith(FILLING)  # claimed
        stale = b"old"  # the reader has read the database...
        invalidate(pool, [key])  # ...then a writer commits and invalidates
        return {key: stale}

    assert read_through(pool, [key], load) == {key: b"old"}  # this reader saw the old value
    assert key not in pool.get_many([key])  # but it is not cached
    assert read_through(pool, [key], lambda m: {key: b"new"}) == {key: b"new"}
    assert pool.get_many([key]) == {key: b"new"}


def test_a_cold_read_is_three_calls_and_a_fill_landing_before_the_claim_is_taken(
    pools: dict[str, Any],
) -> None:
    """A miss costs the get, one call that claims and reads the claims back, and the fills.
    A key another reader fills between the get and the claim is not loaded again."""
    pool = pools["pins"]
    ours, theirs = _key(), _key()
    real_claim = pool.claim_many

    def claim_after_their_fill(items: dict[str, bytes], expire: int) -> dict[str, Any]:
        pool.add(theirs, b"filled by another reader", 0)  # lands just before our claim
        return real_claim(items, expire)

    loaded: list[list[str]] = []

    def load(missing: list[str]) -> dict[str, bytes]:
        loaded.append(missing)
        return {key: b"from the database" for key in missing}

    pool.claim_many = claim_after_their_fill
    try:
        calls = pool.stats.calls
        got = read_through(pool, [ours, theirs], load)
    finally:
        del pool.claim_many
    assert pool.stats.calls - calls == 4  # get, claim (+ the other reader's add), fill
    assert loaded == [[ours]]
    assert got == {ours: b"from the database", theirs: b"filled by another reader"}
    assert pool.get_many([ours, theirs]) == got


def test_a_reclaimed_key_does_not_take_the_first_readers_stale_value(
    pools: dict[str, Any],
) -> None:
    """Reader A claims and reads the old value; a writer commits and invalidates; reader B
    misses, claims afresh and is reading the new value when A stores. A must not store
    the old value over B's claim (its claim was deleted): the cache would keep it."""
    pool = pools["pins"]
    key = _key()
    b_is_loading, b_may_finish = threading.Event(), threading.Event()
    b_result: list[dict[str, bytes]] = []

    def load_b(missing: list[str]) -> dict[str, bytes]:
        b_is_loading.set()
        assert b_may_finish.wait(10)
        return {key: b"new"}

    reader_b = threading.Thread(target=lambda: b_result.append(read_through(pool, [key], load_b)))

    def load_a(missing: list[str]) -> dict[str, bytes]:
        stale = b"old"  # A read the database
        invalidate(pool, [key])  # a writer commits, then invalidates
        reader_b.start()  # B misses, claims, reads the database
        assert b_is_loading.wait(10)
        return {key: stale}

    try:
        read_through(pool, [key], load_a)
    finally:
        b_may_finish.set()
        reader_b.join(10)
    assert b_result == [{key: b"new"}]
    assert pool.get_many([key]).get(key) != b"old", "the stale value was cached"


def test_object_update_during_a_cached_read_leaves_no_stale_object(
    store: Store, cached: CachedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin = store.objects("pin").create(3, {"title": "old"})
    table = store.objects("pin")
    original = table.get_many
    writes: list[dict[str, Any]] = []

    def get_many_then_write(*args: Any, **kwargs: Any) -> Any:
        rows = original(*args, **kwargs)  # the reader's SELECT...
        if not writes:
            writes.append(cached.objects("pin").update(pin, {"title": "new"}))  # ...a write
        return rows

    monkeypatch.setattr(table, "get_many", get_many_then_write)
    assert cached.objects("pin").get(pin)["title"] == "old"  # type: ignore[index]
    monkeypatch.setattr(table, "get_many", original)
    assert writes
    assert cached.objects("pin").get(pin)["title"] == "new"  # type: ignore[index]


def test_remove_during_a_list_fill_leaves_no_stale_list(
    store: Store, cached: CachedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    board, a, b = compose(8, BOARD, 1), compose(8, PIN, 1), compose(8, PIN, 2)
    store.mapping("board_has_pins").add(board, a, sequence=1)
    store.mapping("board_has_pins").add(board, b, sequence=2)
    table = store.mapping("board_has_pins")
    original = table.rows_many
    done: list[bool] = []

    def rows_then_remove(*args: Any, **kwargs: Any) -> Any:
        rows = original(*args, **kwargs)
        if not done:
            done.append(cached.mapping("board_has_pins").remove(board, b))
        return rows

    monkeypatch.setattr(table, "rows_many", rows_then_remove)
    assert cached.mapping("board_has_pins").page(board).ids == [b, a]  # what the reader saw
    monkeypatch.setattr(table, "rows_many", original)
    assert done == [True]
    assert cached.mapping("board_has_pins").page(board) == Page([a], None)


def test_adds_landing_on_a_claim_are_merged(
    store: Store, cached: CachedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = compose(8, BOARD, 1)
    old = [compose(8, PIN, n) for n in (1, 2)]
    for i, pin in enumerate(old):
        store.mapping("board_has_pins").add(board, pin, sequence=i + 1)
    new = compose(8, PIN, 3)
    table = store.mapping("board_has_pins")
    original = table.rows_many
    done: list[bool] = []

    def rows_then_add(*args: Any, **kwargs: Any) -> Any:
        rows = original(*args, **kwargs)  # read before the add committed
        if not done:
            done.append(cached.mapping("board_has_pins").add(board, new, sequence=10))
        return rows

    monkeypatch.setattr(table, "rows_many", rows_then_add)
    cached.mapping("board_has_pins").page(board)
    monkeypatch.setattr(table, "rows_many", original)
    assert done == [True]
    expected = store.mapping("board_has_pins").page(board)
    assert expected == Page([new, old[1], old[0]], None)
    with store.count_queries() as warm:
        assert cached.mapping("board_has_pins").page(board) == expected
    assert warm.count == 0  # the merged fill was stored


def test_appends_on_a_raw_claim_are_merged(pools: dict[str, Any]) -> None:
    pool = pools["lists"]
    key = _key()

    def load(missing: list[str]) -> dict[str, bytes]:
        assert pool.append(key, b"+late") is True  # an add lands on the claim
        return {key: b"filled"}

    merged = read_through(pool, [key], load, merge=lambda loaded, extra: loaded + extra)
    assert merged == {key: b"filled+late"}
    assert pool.get_many([key]) == {key: b"filled+late"}


# -- lists longer than the cache holds ------------------------------------------------


def test_long_list_serves_first_pages_from_cache_and_the_rest_from_sql(
    store: Store, cached: CachedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_tables, "LIST_CAP", 10)
    board = compose(5, BOARD, 1)
    fill_board(store, board, 26)
    mapping = cached.mapping("board_has_pins")
    for limit, oldest_first in ((4, False), (3, False), (10, False), (4, True), (50, False)):
        want = walk(store.mapping("board_has_pins"), board, limit, oldest_first=oldest_first)
        assert walk(mapping, board, limit, oldest_first=oldest_first) == want
    # warm: the pages that fit in the newest 10 entries cost nothing, deeper ones read SQL
    want = walk(store.mapping("board_has_pins"), board, 4)
    cursor, costs = None, []
    for page in want:
        with store.count_queries() as q:
            assert mapping.page(board, limit=4, cursor=cursor) == page
        costs.append(q.count)
        cursor = page.cursor
    assert costs[:2] == [0, 0]
    assert all(c == 1 for c in costs[2:])
    with store.count_queries() as q:
        assert mapping.page(board, limit=4, oldest_first=True) == store.mapping(
            "board_has_pins"
        ).page(board, limit=4, oldest_first=True)
    # a new pin on the long list is appended: the first page stays warm and is right
    newest = compose(5, PIN, 999)
    mapping.add(board, newest, sequence=5000)
    mapping.page(board, limit=4)  # the count was invalidated, the list appended to
    with store.count_queries() as q:
        page = mapping.page(board, limit=4)
    assert q.count == 0
    assert page == store.mapping("board_has_pins").page(board, limit=4)
    assert page.ids[0] == newest
    assert walk(mapping, board, 4) == walk(store.mapping("board_has_pins"), board, 4)
