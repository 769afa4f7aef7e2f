"""The fill protocol: a cold read never stores a value read before a write that
invalidated it, and costs three pool calls."""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from shardstore import Page, Store, compose
from shardstore.cache import CachedStore
from shardstore.cache.readthrough import FILLING, invalidate, read_through
from shardstore.selects import Selects
from tests.shardstore.cache.helpers import FOLDER, NOTE

# -- the fill protocol ---------------------------------------------------------------


_names = itertools.count(1)


def loading(
    load: Callable[[list[str]], dict[str, bytes]],
) -> Callable[[list[str]], Selects[dict[str, bytes]]]:
    """``load`` as a read-through's load, which plans SELECTs (here: none)."""
    return lambda missing: Selects.computed(lambda: load(missing))


def _key() -> str:
    return f"t{uuid.uuid4().hex[:12]}:k{next(_names)}"


def test_write_during_fill_is_not_overwritten_by_the_stale_read(pools: dict[str, Any]) -> None:
    pool = pools["notes"]
    key = _key()

    def load(missing: list[str]) -> dict[str, bytes]:
        assert pool.get_many([key]).get(key, b"").startswith(FILLING)  # claimed
        stale = b"old"  # the reader has read the database...
        invalidate(pool, [key])  # ...then a writer commits and invalidates
        return {key: stale}

    assert read_through(pool, [key], loading(load)) == {
        key: b"old"
    }  # this reader saw the old value
    assert key not in pool.get_many([key])  # but it is not cached
    assert read_through(pool, [key], loading(lambda m: {key: b"new"})) == {key: b"new"}
    assert pool.get_many([key]) == {key: b"new"}


def test_a_cold_read_is_three_calls_and_a_fill_landing_before_the_claim_is_taken(
    pools: dict[str, Any],
) -> None:
    """A miss costs the get, one call that claims and reads the claims back, and the fills.
    A key another reader fills between the get and the claim is not loaded again."""
    pool = pools["notes"]
    ours, theirs = _key(), _key()
    real_claim = pool.claim

    def claim_after_their_fill(home: Any, items: dict[str, bytes], expire: int) -> Any:
        pool.add(theirs, b"filled by another reader", 0)  # lands just before our claim
        return real_claim(home, items, expire)

    loaded: list[list[str]] = []

    def load(missing: list[str]) -> dict[str, bytes]:
        loaded.append(missing)
        return dict.fromkeys(missing, b"from the database")

    pool.claim = claim_after_their_fill
    try:
        calls = pool.stats.calls
        got = read_through(pool, [ours, theirs], loading(load))
    finally:
        del pool.claim
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
    pool = pools["notes"]
    key = _key()
    b_is_loading, b_may_finish = threading.Event(), threading.Event()
    b_result: list[dict[str, bytes]] = []

    def load_b(missing: list[str]) -> dict[str, bytes]:
        b_is_loading.set()
        assert b_may_finish.wait(10)
        return {key: b"new"}

    reader_b = threading.Thread(
        target=lambda: b_result.append(read_through(pool, [key], loading(load_b)))
    )

    def load_a(missing: list[str]) -> dict[str, bytes]:
        stale = b"old"  # A read the database
        invalidate(pool, [key])  # a writer commits, then invalidates
        reader_b.start()  # B misses, claims, reads the database
        assert b_is_loading.wait(10)
        return {key: stale}

    try:
        read_through(pool, [key], loading(load_a))
    finally:
        b_may_finish.set()
        reader_b.join(10)
    assert b_result == [{key: b"new"}]
    assert pool.get_many([key]).get(key) != b"old", "the stale value was cached"


def test_object_update_during_a_cached_read_leaves_no_stale_object(
    store: Store, cached: CachedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = store.objects("note").create(3, {"title": "old"})
    table = store.objects("note")
    original = table.selecting_stored
    writes: list[dict[str, Any]] = []

    def write_once(rows: Any) -> Any:  # after the reader's SELECT...
        if not writes:
            writes.append(cached.objects("note").update(note, {"title": "new"}))  # ...a write
        return rows

    monkeypatch.setattr(
        table, "selecting_stored", lambda *a, **k: original(*a, **k).then(write_once)
    )
    assert cached.objects("note").get(note)["title"] == "old"  # type: ignore[index]
    monkeypatch.setattr(table, "selecting_stored", original)
    assert writes
    assert cached.objects("note").get(note)["title"] == "new"  # type: ignore[index]


def test_remove_during_a_list_fill_leaves_no_stale_list(
    store: Store, cached: CachedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, a, b = compose(8, FOLDER, 1), compose(8, NOTE, 1), compose(8, NOTE, 2)
    store.mapping("folder_has_notes").add(folder, a, sequence=1)
    store.mapping("folder_has_notes").add(folder, b, sequence=2)
    table = store.mapping("folder_has_notes")
    original = table.selecting_rows
    done: list[bool] = []

    def remove_once(rows: Any) -> Any:  # after the reader's SELECT
        if not done:
            done.append(cached.mapping("folder_has_notes").remove(folder, b))
        return rows

    monkeypatch.setattr(
        table, "selecting_rows", lambda *a, **k: original(*a, **k).then(remove_once)
    )
    assert cached.mapping("folder_has_notes").page(folder).ids == [b, a]  # what the reader saw
    monkeypatch.setattr(table, "selecting_rows", original)
    assert done == [True]
    assert cached.mapping("folder_has_notes").page(folder) == Page([a], None)


def test_adds_landing_on_a_claim_are_merged(
    store: Store, cached: CachedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = compose(8, FOLDER, 1)
    old = [compose(8, NOTE, n) for n in (1, 2)]
    for i, note in enumerate(old):
        store.mapping("folder_has_notes").add(folder, note, sequence=i + 1)
    new = compose(8, NOTE, 3)
    table = store.mapping("folder_has_notes")
    original = table.selecting_rows
    done: list[bool] = []

    def add_once(rows: Any) -> Any:  # read before the add committed
        if not done:
            done.append(cached.mapping("folder_has_notes").add(folder, new, sequence=10))
        return rows

    monkeypatch.setattr(table, "selecting_rows", lambda *a, **k: original(*a, **k).then(add_once))
    cached.mapping("folder_has_notes").page(folder)
    monkeypatch.setattr(table, "selecting_rows", original)
    assert done == [True]
    expected = store.mapping("folder_has_notes").page(folder)
    assert expected == Page([new, old[1], old[0]], None)
    with store.count_queries() as warm:
        assert cached.mapping("folder_has_notes").page(folder) == expected
    assert warm.count == 0  # the merged fill was stored


def test_appends_on_a_raw_claim_are_merged(pools: dict[str, Any]) -> None:
    pool = pools["lists"]
    key = _key()

    def load(missing: list[str]) -> dict[str, bytes]:
        assert pool.append(key, b"+late") is True  # an add lands on the claim
        return {key: b"filled"}

    merged = read_through(pool, [key], loading(load), merge=lambda loaded, extra: loaded + extra)
    assert merged == {key: b"filled+late"}
    assert pool.get_many([key]) == {key: b"filled+late"}
