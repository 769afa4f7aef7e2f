"""Cached reads: a warm read costs no SQL and one multi-get per pool; cached pages and cursors
are the store's own; writes invalidate (or append) after they commit; lists longer than
the cache holds."""

from __future__ import annotations

from typing import Any

import pytest

from shardstore import Page, Store, compose
from shardstore.cache import CachedStore
from shardstore.cache import tables as cache_tables
from tests.shardstore.cache.helpers import ACCOUNT, FOLDER, NOTE, calls, delta, fill_folder, walk

# -- warm reads cost no SQL ----------------------------------------------------------


def test_warm_object_with_counts_costs_no_sql(
    store: Store, cached: CachedStore, pools: dict[str, Any]
) -> None:
    folder = store.objects("folder").create(3, {"title": "Recipes", "account_id": 1})
    fill_folder(store, folder, 4, shard=3)
    store.mapping("folder_watched_by_accounts")  # (read-only inverse: counted through its forward)
    expected = store.objects("folder").get(folder, counts=("folder_has_notes",))
    assert expected is not None and expected["counts"] == {"folder_has_notes": 4}

    with store.count_queries() as cold:
        assert cached.objects("folder").get(folder, counts=("folder_has_notes",)) == expected
    assert cold.count == 1  # the object and its count in one query
    before = calls(pools)
    with store.count_queries() as warm:
        assert cached.objects("folder").get(folder, counts=("folder_has_notes",)) == expected
    assert warm.count == 0
    assert delta(before, pools) == {"folders": 1}  # one get: the object holds its counts
    assert pools["folders"].stats.hits >= 1


def test_objects_are_cached_as_stored_with_their_counts(store: Store, cached: CachedStore) -> None:
    """The cached value is the stored JSON with its counts spliced in, undecoded: an object
    with no fields, one with counts and one with none read back as the store reads them."""
    folders = store.objects("folder")
    empty = folders.create(2, {})
    counted = folders.create(2, {"title": 'Caf\u00e9 "best", {braces}', "account_id": 1})
    plain = folders.create(5, {"title": "no notes"})
    fill_folder(store, empty, 1, shard=2)
    fill_folder(store, counted, 3, shard=2)
    wanted, counts = [empty, counted, plain], ("folder_has_notes",)
    expected = folders.get_many(wanted, counts=counts)
    assert [b["counts"]["folder_has_notes"] for b in expected] == [1, 3, 0]
    assert expected[0] == {"id": empty, "counts": {"folder_has_notes": 1}}
    for _ in ("cold", "warm"):
        assert cached.objects("folder").get_many(wanted, counts=counts) == expected
    assert cached.objects("folder").get_many(wanted) == folders.get_many(wanted)


def test_warm_get_many_across_shards_and_absent_ids(
    store: Store, cached: CachedStore, pools: dict[str, Any]
) -> None:
    notes = store.objects("note")
    a = notes.create(1, {"title": "a"})
    b = notes.create(9, {"title": "b"})
    c = notes.create(9, {"title": "c"})
    absent = compose(4, NOTE, 77)
    wanted = [c, absent, a, b, a]
    expected = notes.get_many(wanted)
    assert [o["id"] for o in expected] == [c, a, b, a]
    with store.count_queries() as cold:
        assert cached.objects("note").get_many(wanted) == expected
    # One statement per host on MySQL (a UNION ALL over its shards), else one per shard
    # touched (1, 9 and the absent ID's 4).
    hosts = {store.topology.master_of(shard) for shard in (1, 9, 4)}
    assert cold.count == (len(hosts) if store.backend(1).spans_shards else 3)
    before = calls(pools)
    with store.count_queries() as warm:
        assert cached.objects("note").get_many(wanted) == expected
        assert cached.objects("note").get(absent) is None
    assert warm.count == 0
    assert delta(before, pools) == {"notes": 2}


def test_mapping_pages_equal_the_store_pages(
    store: Store, cached: CachedStore, pools: dict[str, Any]
) -> None:
    folder = compose(5, FOLDER, 1)
    fill_folder(store, folder, 23)
    mapping = cached.mapping("folder_has_notes")
    for limit in (1, 2, 3, 4, 7, 23, 50):
        for oldest_first in (False, True):
            want = walk(store.mapping("folder_has_notes"), folder, limit, oldest_first=oldest_first)
            assert walk(mapping, folder, limit, oldest_first=oldest_first) == want
            before = calls(pools)
            with store.count_queries() as warm:
                assert walk(mapping, folder, limit, oldest_first=oldest_first) == want
            assert warm.count == 0, (limit, oldest_first)
            assert delta(before, pools) == {"lists": len(want)}  # one multi-get per page
    # an empty list, and a list of one
    empty, single = compose(5, FOLDER, 2), compose(5, FOLDER, 3)
    store.mapping("folder_has_notes").add(single, compose(5, NOTE, 500), sequence=1)
    for from_id in (empty, single):
        one_page = store.mapping("folder_has_notes").page(from_id)
        assert mapping.page(from_id) == one_page
        with store.count_queries() as warm:
            assert mapping.page(from_id) == one_page
            assert mapping.page(from_id, oldest_first=True) == one_page
        assert warm.count == 0


def test_cursors_are_interchangeable_with_the_store(store: Store, cached: CachedStore) -> None:
    folder = compose(5, FOLDER, 1)
    fill_folder(store, folder, 10)
    first = cached.mapping("folder_has_notes").page(folder, limit=4)
    assert first == store.mapping("folder_has_notes").page(folder, limit=4)
    assert first.cursor is not None
    assert cached.mapping("folder_has_notes").page(
        folder, limit=4, cursor=first.cursor
    ) == store.mapping("folder_has_notes").page(folder, limit=4, cursor=first.cursor)


def test_page_many_warm(store: Store, cached: CachedStore, pools: dict[str, Any]) -> None:
    folders = [compose(2, FOLDER, 1), compose(2, FOLDER, 2), compose(11, FOLDER, 1)]
    for i, folder in enumerate(folders):
        for local in range(1, 4 + i):
            store.mapping("folder_has_notes").add(
                folder, compose(2, NOTE, 10 * i + local), sequence=local
            )
    expected = store.mapping("folder_has_notes").page_many(folders, limit=2)
    with store.count_queries() as cold:
        assert cached.mapping("folder_has_notes").page_many(folders, limit=2) == expected
    assert cold.count == 2  # one per shard
    before = calls(pools)
    with store.count_queries() as warm:
        assert cached.mapping("folder_has_notes").page_many(folders, limit=2) == expected
    assert warm.count == 0
    assert delta(before, pools) == {"lists": 1}


def test_counts_lookups_and_edges_warm(
    store: Store, cached: CachedStore, pools: dict[str, Any]
) -> None:
    account = store.objects("account").create(6, {"login": "ada"})
    other = compose(12, ACCOUNT, 3)
    store.lookup("login").insert("Ada", account)
    follows = store.mapping("account_watches_accounts")
    follows.add(account, other, sequence=5)
    folder = compose(6, FOLDER, 1)
    note = compose(6, NOTE, 1)
    store.mapping("folder_has_notes").add(folder, note, sequence=1)

    def read() -> tuple[Any, ...]:
        return (
            cached.mapping("account_watches_accounts").count(account),
            cached.mapping("account_watched_by_accounts").count_many([other, account]),
            cached.lookup("login").get("ada"),
            cached.lookup("login").get("ADA"),
            cached.lookup("login").get("nobody"),
            cached.mapping("account_watches_accounts").contains(account, other),
            cached.mapping("account_watches_accounts").contains(other, account),
            cached.edges_exist(
                [
                    ("account_watches_accounts", account, other),
                    ("folder_has_notes", folder, note),
                    ("note_in_folder", note, folder),
                    ("folder_has_notes", folder, compose(6, NOTE, 2)),
                ]
            ),
        )

    expected = (
        1,
        {other: 1, account: 0},
        account,
        account,
        None,
        True,
        False,
        {
            ("account_watches_accounts", account, other),
            ("folder_has_notes", folder, note),
            ("note_in_folder", note, folder),
        },
    )
    assert read() == expected
    assert store.edges_exist([("account_watches_accounts", account, other)]) == {
        ("account_watches_accounts", account, other)
    }
    before = calls(pools)
    with store.count_queries() as warm:
        assert read() == expected
    assert warm.count == 0
    # count, count_many, contains (x2), edges_exist: one multi-get each; 3 lookups
    assert delta(before, pools) == {"lists": 5, "accounts": 3}


# -- invalidation ---------------------------------------------------------------------


def test_object_writes_invalidate(store: Store, cached: CachedStore) -> None:
    notes = cached.objects("note")
    note = notes.create(4, {"title": "old"})
    assert notes.get(note)["title"] == "old"  # type: ignore[index]
    notes.update(note, {"title": "new"})
    assert notes.get(note)["title"] == "new"  # type: ignore[index]
    notes.update(note, lambda data: data.update(note="x"))
    assert notes.get(note) == {"id": note, "title": "new", "note": "x"}
    assert notes.delete(note) is True
    assert notes.get(note) is None
    assert notes.get(note, include_inactive=True)["active"] is False  # type: ignore[index]
    assert notes.delete(note, hard=True) is True
    assert notes.get(note, include_inactive=True) is None
    # an ID read while absent, then created: the cached absence is dropped
    later = compose(4, NOTE, 2)
    assert notes.get(later) is None
    assert notes.create(4, {"title": "later"}) == later
    assert notes.get(later) == {"id": later, "title": "later"}


def test_mapping_writes_invalidate_lists_counts_and_edges(
    store: Store, cached: CachedStore
) -> None:
    folder = store.objects("folder").create(7, {"title": "b"})
    has_notes = cached.mapping("folder_has_notes")
    owned_by = cached.mapping("note_in_folder")
    a, b, c = (compose(7, NOTE, n) for n in (1, 2, 3))
    has_notes.add(folder, a, sequence=10)
    has_notes.add(folder, b, sequence=20)

    def state() -> tuple[Any, ...]:
        return (
            has_notes.page(folder),
            has_notes.page(folder, oldest_first=True),
            has_notes.count(folder),
            has_notes.contains(folder, c),
            owned_by.page(c),
            owned_by.count(c),
            cached.objects("folder").get(folder, counts=("folder_has_notes",))["counts"],  # type: ignore[index]
        )

    def uncached() -> tuple[Any, ...]:
        raw = store.mapping("folder_has_notes")
        return (
            raw.page(folder),
            raw.page(folder, oldest_first=True),
            raw.count(folder),
            raw.contains(folder, c),
            store.mapping("note_in_folder").page(c),
            store.mapping("note_in_folder").count(c),
            store.objects("folder").get(folder, counts=("folder_has_notes",))["counts"],  # type: ignore[index]
        )

    assert state() == uncached()
    assert has_notes.add(folder, c, sequence=15) is True  # lands in the middle by sequence
    assert state() == uncached()
    assert state()[0] == Page([b, c, a], None)
    with store.count_queries() as warm:
        state()
    assert warm.count == 0  # the append kept the list warm
    assert has_notes.add(folder, c, sequence=99) is False  # already there: nothing changes
    assert state() == uncached()
    assert has_notes.remove(folder, c) is True
    assert state() == uncached()
    assert state()[0] == Page([b, a], None)
    assert has_notes.remove(folder, c) is False
    assert state() == uncached()
    assert has_notes.add(folder, c, sequence=30) is True  # back again, now newest
    assert state() == uncached()
    assert state()[0] == Page([c, b, a], None)


def test_an_edge_refreshes_the_cached_counts_of_the_objects_at_both_ends(
    store: Store, cached: CachedStore
) -> None:
    account = store.objects("account").create(2, {"login": "ann"})
    note = store.objects("note").create(6, {"title": "p"})
    likes, liked_by = ("account_stars_notes",), ("note_starred_by_accounts",)

    def counts() -> tuple[Any, Any]:
        u = cached.objects("account").get(account, counts=likes)
        p = cached.objects("note").get(note, counts=liked_by)
        return u["counts"], p["counts"]  # type: ignore[index]

    assert counts() == ({"account_stars_notes": 0}, {"note_starred_by_accounts": 0})  # now cached
    cached.mapping("account_stars_notes").add(account, note)
    assert counts() == ({"account_stars_notes": 1}, {"note_starred_by_accounts": 1})
    cached.mapping("account_stars_notes").remove(account, note)
    assert counts() == ({"account_stars_notes": 0}, {"note_starred_by_accounts": 0})


def test_lookup_writes_invalidate(store: Store, cached: CachedStore) -> None:
    account = store.objects("account").create(2, {})
    names = cached.lookup("login")
    assert names.get("grace") is None  # cached as absent
    names.insert("Grace", account)
    assert names.get("grace") == account
    assert names.delete("grace", account) is True
    assert names.get("GRACE") is None


# -- lists longer than the cache holds ------------------------------------------------


def test_long_list_serves_first_pages_from_cache_and_the_rest_from_sql(
    store: Store, cached: CachedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_tables, "LIST_CAP", 10)
    folder = compose(5, FOLDER, 1)
    fill_folder(store, folder, 26)
    mapping = cached.mapping("folder_has_notes")
    for limit, oldest_first in ((4, False), (3, False), (10, False), (4, True), (50, False)):
        want = walk(store.mapping("folder_has_notes"), folder, limit, oldest_first=oldest_first)
        assert walk(mapping, folder, limit, oldest_first=oldest_first) == want
    # warm: the pages that fit in the newest 10 entries cost nothing, deeper ones read SQL
    want = walk(store.mapping("folder_has_notes"), folder, 4)
    cursor, costs = None, []
    for page in want:
        with store.count_queries() as q:
            assert mapping.page(folder, limit=4, cursor=cursor) == page
        costs.append(q.count)
        cursor = page.cursor
    assert costs[:2] == [0, 0]
    assert all(c == 1 for c in costs[2:])
    with store.count_queries() as q:
        assert mapping.page(folder, limit=4, oldest_first=True) == store.mapping(
            "folder_has_notes"
        ).page(folder, limit=4, oldest_first=True)
    # a new note on the long list is appended: the first page stays warm and is right
    newest = compose(5, NOTE, 999)
    mapping.add(folder, newest, sequence=5000)
    mapping.page(folder, limit=4)  # the count was invalidated, the list appended to
    with store.count_queries() as q:
        page = mapping.page(folder, limit=4)
    assert q.count == 0
    assert page == store.mapping("folder_has_notes").page(folder, limit=4)
    assert page.ids[0] == newest
    assert walk(mapping, folder, 4) == walk(store.mapping("folder_has_notes"), folder, 4)
