"""Cached reads: a warm read costs no SQL and one multi-get per pool; cached pages and cursors
are the store's own; writes invalidate (or append) after they commit; lists longer than
the cache holds."""

from __future__ import annotations

from typing import Any

import pytest

from shardstore import Page, Store, compose
from shardstore.cache import CachedStore
from shardstore.cache import tables as cache_tables
from tests.shardstore.cache.helpers import BOARD, PIN, USER, calls, delta, fill_board, walk

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


def test_objects_are_cached_as_stored_with_their_counts(store: Store, cached: CachedStore) -> None:
    """The cached value is the stored JSON with its counts spliced in, undecoded: an object
    with no fields, one with counts and one with none read back as the store reads them."""
    boards = store.objects("board")
    empty = boards.create(2, {})
    counted = boards.create(2, {"title": 'Caf\u00e9 "best", {braces}', "owner_id": 1})
    plain = boards.create(5, {"title": "no pins"})
    fill_board(store, empty, 1, shard=2)
    fill_board(store, counted, 3, shard=2)
    wanted, counts = [empty, counted, plain], ("board_has_pins",)
    expected = boards.get_many(wanted, counts=counts)
    assert [b["counts"]["board_has_pins"] for b in expected] == [1, 3, 0]
    assert expected[0] == {"id": empty, "counts": {"board_has_pins": 1}}
    for _ in ("cold", "warm"):
        assert cached.objects("board").get_many(wanted, counts=counts) == expected
    assert cached.objects("board").get_many(wanted) == boards.get_many(wanted)


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
