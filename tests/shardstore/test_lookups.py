"""Mod-shard lookups: unique external keys -> IDs, routed by md5 bucket."""

from __future__ import annotations

import hashlib
import threading

import pytest

from shardstore import DuplicateKey, InvalidKey, Store, WrongType, compose

from .conftest import plain


def account(shard: int, local: int = 1) -> int:
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
    logins = store.lookup("login")
    ada = account(5)
    logins.insert("Ada.Lovelace", ada)
    assert logins.get("ada.lovelace") == ada
    assert logins.get("ADA.LOVELACE") == ada
    assert logins.get("  Ada.Lovelace ") == ada
    assert logins.get("ada") is None
    assert store.lookup("mailbox").get("ada.lovelace") is None  # another table


def test_the_key_lives_on_its_bucket_shard(store: Store) -> None:
    logins = store.lookup("login")
    keys = {f"User{i}": account(i % 16, i + 1) for i in range(12)}
    for key, object_id in keys.items():
        logins.insert(key, object_id)
    expected: dict[int, list[tuple[str, int]]] = {}
    for key, object_id in keys.items():
        shard = expected_shard(store, key.casefold())
        assert logins.shard_of(key) == shard
        expected.setdefault(shard, []).append((key.casefold(), object_id))
    assert len(expected) > 1  # the keys really spread over shards
    found = rows_everywhere(store, "lookup_login")
    assert {s: sorted(r) for s, r in found.items()} == {s: sorted(r) for s, r in expected.items()}


def test_duplicate_key_changes_nothing(store: Store) -> None:
    logins = store.lookup("login")
    logins.insert("bob", account(1))
    with pytest.raises(DuplicateKey) as info:
        logins.insert("BOB", account(2))
    assert info.value.key == "bob"
    assert info.value.lookup == "login"
    assert "bob" in str(info.value)
    assert logins.get("bob") == account(1)
    assert rows_everywhere(store, "lookup_login") == {
        expected_shard(store, "bob"): [("bob", account(1))]
    }
    # The connection that saw the violation is still usable.
    logins.insert("carol", account(3))
    assert logins.get("carol") == account(3)


def test_same_key_in_two_lookups(store: Store) -> None:
    store.lookup("login").insert("dana", account(1))
    store.lookup("mailbox").insert("dana", account(2))
    assert store.lookup("login").get("dana") == account(1)
    assert store.lookup("mailbox").get("dana") == account(2)


def test_concurrent_inserts_have_one_winner(store: Store) -> None:
    logins = store.lookup("login")
    threads = 8
    start = threading.Barrier(threads)
    winners: list[int] = []
    losers: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def claim(n: int) -> None:
        try:
            start.wait()
            logins.insert("Contested" if n % 2 else "contested", account(n, n + 1))
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
    assert logins.get("contested") == account(winners[0], winners[0] + 1)
    assert sum(len(r) for r in rows_everywhere(store, "lookup_login").values()) == 1


@pytest.mark.parametrize("key", ["", "   ", "\t\n", "x" * 256, "\u00df" * 128])
def test_invalid_keys(store: Store, key: str) -> None:
    logins = store.lookup("login")
    with pytest.raises(InvalidKey):
        logins.insert(key, account(1))
    with pytest.raises(InvalidKey):
        logins.get(key)
    assert rows_everywhere(store, "lookup_login") == {}
    assert issubclass(InvalidKey, ValueError)


def test_non_string_key(store: Store) -> None:
    with pytest.raises(InvalidKey):
        store.lookup("login").insert(123, account(1))  # type: ignore[arg-type]


def test_longest_key(store: Store) -> None:
    logins = store.lookup("login")
    key = "\u00e9" * 254 + "\U0001f600"  # 255 characters, 4-byte UTF-8 at the end
    logins.insert(key, account(2))
    assert logins.get(key.upper()) == account(2)
    [(_shard, rows)] = rows_everywhere(store, "lookup_login").items()
    assert rows == [(key, account(2))]


def test_keys_differing_only_in_accents_are_distinct(store: Store) -> None:
    logins = store.lookup("login")
    logins.insert("rene", account(1))
    logins.insert("ren\u00e9", account(2))
    assert logins.get("rene") == account(1)
    assert logins.get("REN\u00c9") == account(2)


def test_wrong_type_of_id(store: Store) -> None:
    with pytest.raises(WrongType):
        store.lookup("login").insert("eve", compose(1, 1, 1))  # a note ID
    assert store.lookup("login").get("eve") is None


def test_delete(store: Store) -> None:
    logins = store.lookup("login")
    logins.insert("Frank", account(1))
    assert logins.delete("frank", account(2)) is False  # someone else's key
    assert logins.get("frank") == account(1)
    assert logins.delete("FRANK", account(1)) is True
    assert logins.get("frank") is None
    logins.insert("frank", account(2))
    assert logins.get("frank") == account(2)
