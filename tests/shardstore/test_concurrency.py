"""Concurrent writers: counts stay exact and contention is never reported as a dead host."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

from shardstore import Store, compose

USER, PIN, BOARD = 3, 1, 2


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
    has_pins = store.mapping("board_has_pins")
    board, pin = compose(6, BOARD, 1), compose(13, PIN, 1)
    results: list[bool] = []
    errors = run_threads(8, lambda n: results.append(has_pins.add(board, pin)))
    assert errors == []
    assert results.count(True) == 1
    assert has_pins.count(board) == 1
    assert store.mapping("pin_owned_by_board").count(pin) == 1


def test_concurrent_follows_on_one_shard(store: Store) -> None:
    """Users of one shard follow each other from 8 threads: every add lands, counts are exact."""
    follows = store.mapping("user_follows_users")
    followed_by = store.mapping("user_followed_by_users")
    users = [compose(4, USER, local) for local in range(1, 13)]
    pairs = [(a, b) for a in users for b in users if a != b]
    random.Random(5).shuffle(pairs)
    chunks = [pairs[n::8] for n in range(8)]

    def work(n: int) -> None:
        for a, b in chunks[n]:
            follows.add(a, b)

    errors = run_threads(8, work)
    assert errors == [], f"{len(errors)} adds failed, first: {errors[0]!r}" if errors else ""
    for user in users:
        assert follows.count(user) == len(users) - 1
        assert followed_by.count(user) == len(users) - 1
        assert sorted(follows.page(user, limit=100).ids) == sorted(u for u in users if u != user)


def test_concurrent_adds_and_removes_keep_counts_exact(store: Store) -> None:
    """12 threads like and unlike pins of one shard. Contention (a lock wait, an InnoDB
    deadlock) is the store's to resolve: no write may fail, and every count stays exact."""
    likes = store.mapping("user_likes_pins")
    users = [compose(9, USER, local) for local in range(1, 5)]
    items = [compose(9, PIN, local) for local in range(1, 11)]

    def work(n: int) -> None:
        rng = random.Random(n)
        for _ in range(200):
            user, pin = rng.choice(users), rng.choice(items)
            if rng.random() < 0.6:
                likes.add(user, pin)
            else:
                likes.remove(user, pin)

    errors = run_threads(12, work)
    assert errors == [], f"{len(errors)} writes failed, first: {errors[0]!r}" if errors else ""
    for user in users:
        assert likes.count(user) == len(likes.page(user, limit=100).ids)
    for pin in items:
        liked_by = store.mapping("pin_liked_by_users")
        assert liked_by.count(pin) == len(liked_by.page(pin, limit=100).ids)
        assert sorted(liked_by.page(pin, limit=100).ids) == sorted(
            u for u in users if likes.contains(u, pin)
        )
