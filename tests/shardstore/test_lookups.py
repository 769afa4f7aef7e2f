"""Mod-shard lookups: unique external keys -> IDs, routed by md5 bucket."""

from __future__ import annotations

import hashlib
import threading

import pytest

from shardstore import DuplicateKey, InvalidKey, Store, WrongType, compose

from .conftest import plain


def user(shard: int, local: int = 1) -> int:
    return compose(shard, 3, local)


def expected_shard(store: Store, normalized: str) -> int:
    bucket = int(hashlib.md5(normalized.encode()).hexdigest(), 16) % 4096
    return store.topology.lookup_shard(bucket)


def rows_everywhere(store: Store, table: str) -> dict[int, list[tuple[str, int]]]:
    found = {}
    for shard in range(store.topology.shard_count):
        with plain(store).session(shard) as session:
            rows = session.query(f"SELECT lookup_key, object_id FROM {{db}}.{table}")
        if rows:
            found[shard] = [(str(k), int(v)) for k, v in rows]
    return found


def test_insert_and_get_case_insensitively(store: Store) -> None:
    usernames = store.lookup("username")
    ada = user(5)
    usernames.insert("Ada.Lovelace", ada)
    assert usernames.get("ada.lovelace") == ada
    assert usernames.get("ADA.LOVELACE") == ada
    assert usernames.get("  Ada.Lovelace ") == ada
    assert usernames.get("ada") is None
    assert store.lookup("email").get("ada.lovelace") is None  # another table


def test_the_key_lives_on_its_bucket_shard(store: Store) -> None:
    usernames = store.lookup("username")
    keys = {f"User{i}": user(i % 16, i + 1) for i in range(12)}
    for key, object_id in keys.items():
        usernames.insert(key, object_id)
    expected: dict[int, list[tuple[str, int]]] = {}
    for key, object_id in keys.items():
        shard = expected_shard(store, key.casefold())
        assert usernames.shard_of(key) == shard
        expected.setdefault(shard, []).append((key.casefold(), object_id))
    assert len(expected) > 1  # the keys really spread over shards
    found = rows_everywhere(store, "lookup_username")
    assert {s: sorted(r) for s, r in found.items()} == {s: sorted(r) for s, r in expected.items()}


def test_duplicate_key_changes_nothing(store: Store) -> None:
    usernames = store.lookup("username")
    usernames.insert("bob", user(1))
    with pytest.raises(DuplicateKey) as info:
        usernames.insert("BOB", user(2))
    assert info.value.key == "bob"
    assert info.value.lookup == "username"
    assert "bob" in str(info.value)
    assert usernames.get("bob") == user(1)
    assert rows_everywhere(store, "lookup_username") == {
        expected_shard(store, "bob"): [("bob", user(1))]
    }
    # The connection that saw the violation is still usable.
    usernames.insert("carol", user(3))
    assert usernames.get("carol") == user(3)


def test_same_key_in_two_lookups(store: Store) -> None:
    store.lookup("username").insert("dana", user(1))
    store.lookup("email").insert("dana", user(2))
    assert store.lookup("username").get("dana") == user(1)
    assert store.lookup("email").get("dana") == user(2)


def test_concurrent_inserts_have_one_winner(store: Store) -> None:
    usernames = store.lookup("username")
    threads = 8
    start = threading.Barrier(threads)
    winners: list[int] = []
    losers: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def claim(n: int) -> None:
        try:
            start.wait()
            usernames.insert("Contested" if n % 2 else "contested", user(n, n + 1))
        except DuplicateKey:
            with lock:
                losers.append(n)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        else:
            with lock:
                winners.append(n)

    workers = [threading.Thread(target=claim, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert len(winners) == 1
    assert sorted(winners + losers) == list(range(threads))
    assert usernames.get("contested") == user(winners[0], winners[0] + 1)
    assert sum(len(r) for r in rows_everywhere(store, "lookup_username").values()) == 1


@pytest.mark.parametrize("key", ["", "   ", "\t\n", "x" * 256, "\u00df" * 128])
def test_invalid_keys(store: Store, key: str) -> None:
    usernames = store.lookup("username")
    with pytest.raises(InvalidKey):
        usernames.insert(key, user(1))
    with pytest.raises(InvalidKey):
        usernames.get(key)
    assert rows_everywhere(store, "lookup_username") == {}
    assert issubclass(InvalidKey, ValueError)


def test_non_string_key(store: Store) -> None:
    with pytest.raises(InvalidKey):
        store.lookup("username").insert(123, user(1))  # type: ignore[arg-type]


def test_longest_key(store: Store) -> None:
    usernames = store.lookup("username")
    key = "\u00e9" * 254 + "\U0001f600"  # 255 characters, 4-byte UTF-8 at the end
    usernames.insert(key, user(2))
    assert usernames.get(key.upper()) == user(2)
    [(_shard, rows)] = rows_everywhere(store, "lookup_username").items()
    assert rows == [(key, user(2))]


def test_keys_differing_only_in_accents_are_distinct(store: Store) -> None:
    usernames = store.lookup("username")
    usernames.insert("rene", user(1))
    usernames.insert("ren\u00e9", user(2))
    assert usernames.get("rene") == user(1)
    assert usernames.get("REN\u00c9") == user(2)


def test_wrong_type_of_id(store: Store) -> None:
    with pytest.raises(WrongType):
        store.lookup("username").insert("eve", compose(1, 1, 1))  # a pin ID
    assert store.lookup("username").get("eve") is None


def test_delete(store: Store) -> None:
    usernames = store.lookup("username")
    usernames.insert("Frank", user(1))
    assert usernames.delete("frank", user(2)) is False  # someone else's key
    assert usernames.get("frank") == user(1)
    assert usernames.delete("FRANK", user(1)) is True
    assert usernames.get("frank") is None
    usernames.insert("frank", user(2))
    assert usernames.get("frank") == user(2)
