"""Concurrent writers: counts stay exact and contention is never reported as a dead host."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

from shardstore import Store, compose

ACCOUNT, NOTE, FOLDER = 3, 1, 2


def run_threads(count: int, work: Callable[[int], None]) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(count)

    def body(n: int) -> None:
        try:
            start.wait()
            work(n)
        except BaseException as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_concurrent_adds_of_one_pair_count_once(store: Store) -> None:
    has_notes = store.mapping("folder_has_notes")
    folder, note = compose(6, FOLDER, 1), compose(13, NOTE, 1)
    results: list[bool] = []
    errors = run_threads(8, lambda n: results.append(has_notes.add(folder, note)))
    assert errors == []
    assert results.count(True) == 1
    assert has_notes.count(folder) == 1
    assert store.mapping("note_in_folder").count(note) == 1


def test_concurrent_follows_on_one_shard(store: Store) -> None:
    """Accounts of one shard watch each other from 8 threads: every add lands, counts are exact."""
    follows = store.mapping("account_watches_accounts")
    followed_by = store.mapping("account_watched_by_accounts")
    accounts = [compose(4, ACCOUNT, local) for local in range(1, 13)]
    pairs = [(a, b) for a in accounts for b in accounts if a != b]
    random.Random(5).shuffle(pairs)
    chunks = [pairs[n::8] for n in range(8)]

    def work(n: int) -> None:
        for a, b in chunks[n]:
            follows.add(a, b)

    errors = run_threads(8, work)
    assert errors == [], f"{len(errors)} adds failed, first: {errors[0]!r}" if errors else ""
    for account in accounts:
        assert follows.count(account) == len(accounts) - 1
        assert followed_by.count(account) == len(accounts) - 1
        assert sorted(follows.page(account, limit=100).ids) == sorted(
            u for u in accounts if u != account
        )


def test_concurrent_adds_and_removes_keep_counts_exact(store: Store) -> None:
    """12 threads star and unstar notes of one shard. Contention (a lock wait, an InnoDB
    deadlock) is the store's to resolve: no write may fail, and every count stays exact."""
    likes = store.mapping("account_stars_notes")
    accounts = [compose(9, ACCOUNT, local) for local in range(1, 5)]
    items = [compose(9, NOTE, local) for local in range(1, 11)]

    def work(n: int) -> None:
        rng = random.Random(n)
        for _ in range(200):
            account, note = rng.choice(accounts), rng.choice(items)
            if rng.random() < 0.6:
                likes.add(account, note)
            else:
                likes.remove(account, note)

    errors = run_threads(12, work)
    assert errors == [], f"{len(errors)} writes failed, first: {errors[0]!r}" if errors else ""
    for account in accounts:
        assert likes.count(account) == len(likes.page(account, limit=100).ids)
    for note in items:
        liked_by = store.mapping("note_starred_by_accounts")
        assert liked_by.count(note) == len(liked_by.page(note, limit=100).ids)
        assert sorted(liked_by.page(note, limit=100).ids) == sorted(
            u for u in accounts if likes.contains(u, note)
        )
