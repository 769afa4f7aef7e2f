"""What a read through may leave in the caches: a fill expires (a day by default), lists
appended to keep their fill's expiry, and a process that cannot confirm its shard map (its
config follower's lease is over) serves what it reads and stores nothing, fill or append."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest

from shardstore import Store, compose
from shardstore.cache import CachedStore, LocalPool, MemcachePool
from shardstore.cache.readthrough import FILL_TTL, MAX_FILL_TTL, Fills
from tests.shardstore.cache.helpers import FOLDER, calls, delta

CUT_OFF = "the config source has not answered for 9s (lease 8s)"


def stores(pool: Any) -> int:
    """How many storage commands (set, add, cas, append, ...) the pool's memcached has run,
    or the items its process memory holds."""
    if isinstance(pool, LocalPool):
        return len(pool.memory.items)
    pool.get_many(["-"])  # on this thread's connection: once its writes sent unanswered ran
    host, port = pool.servers[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as connection:
        connection.sendall(b"stats\r\n")
        text = b""
        while not text.endswith(b"END\r\n"):
            text += connection.recv(65536)
    stats = dict(line.split()[1:3] for line in text.decode().splitlines() if line.count(" ") == 2)
    return int(stats["cmd_set"])


def time_left(pool: Any, key: str) -> float | None:
    """The seconds ``key`` has left to live: memcached's ``mg <key> t`` (-1: none), or the
    process memory's expiry; None if it is not there."""
    if isinstance(pool, LocalPool):
        item = pool.memory.items.get(key)
        if item is None:
            return None
        return item[2] - time.monotonic() if item[2] else -1
    assert isinstance(pool, MemcachePool)
    pool.get_many([key])  # on this thread's connection: once its fills sent unanswered ran
    host, port = pool.servers[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as connection:
        connection.sendall(f"mg {key} t\r\n".encode())
        reply = connection.recv(1024).decode().split()
    if reply[0] == "EN":
        return None
    assert reply[0] == "HD", reply
    return float(next(flag[1:] for flag in reply[1:] if flag.startswith("t")))


def test_a_fill_expires_after_a_day_and_an_appended_list_keeps_its_fills_expiry(
    store: Store, pools: dict[str, Any]
) -> None:
    cached = CachedStore(store, pools)
    note = store.objects("note").create(3, {"n": 1})
    folder = compose(6, FOLDER, 1)
    assert cached.objects("note").get(note) is not None
    left = time_left(pools["notes"], cached.objects("note").key(note))
    assert left is not None and FILL_TTL - 5 < left <= FILL_TTL

    mapping = cached.mapping("folder_has_notes")
    mapping.add(folder, note, sequence=1)
    assert mapping.page(folder).ids == [note]  # the list filled
    key = mapping.list_key(folder)
    filled = time_left(pools["lists"], key)
    assert filled is not None and FILL_TTL - 5 < filled <= FILL_TTL
    other = store.objects("note").create(3, {"n": 2})
    mapping.add(folder, other, sequence=2)  # appended: its expiry stands
    assert mapping.page(folder).ids == [other, note]
    appended = time_left(pools["lists"], key)
    assert appended is not None and appended <= filled


def test_a_fill_dies_by_itself_after_the_stores_fill_seconds(
    store: Store, pools: dict[str, Any]
) -> None:
    """A value the store was never told to forget (written around it: by hand, by a process
    whose invalidation was lost) is read afresh once its fill has expired."""
    cached = CachedStore(store, pools, fill_seconds=1)
    note = store.objects("note").create(3, {"n": "old"})
    assert cached.objects("note").get(note)["n"] == "old"  # type: ignore[index]
    left = time_left(pools["notes"], cached.objects("note").key(note))
    assert left is not None and 0 <= left <= 1
    store.objects("note").update(note, {"n": "new"})  # the cache is not told
    assert cached.objects("note").get(note)["n"] == "old"  # type: ignore[index]
    deadline = time.monotonic() + 5
    while cached.objects("note").get(note)["n"] == "old":  # type: ignore[index]
        assert time.monotonic() < deadline, "the fill did not expire"
        time.sleep(0.2)


def test_a_fills_expiry_is_one_second_to_thirty_days() -> None:
    assert Fills().seconds == FILL_TTL == 86400
    for wrong in (0, -1, MAX_FILL_TTL + 1):
        with pytest.raises(ValueError, match="a fill's expiry"):
            Fills(wrong)


def test_a_process_that_cannot_confirm_its_map_serves_reads_and_stores_nothing(
    store: Store, pools: dict[str, Any]
) -> None:
    """Its lease over, a process reads through to MySQL and serves what it read, with no
    claim and no fill (one get, no more round trips); its writes delete the keys they change,
    lists too, and append nothing. Once its lease holds again, it fills as before."""
    reason: list[str | None] = [CUT_OFF]
    cached = CachedStore(store, pools, lease=lambda: reason[0])
    account = store.objects("account").create(2, {"name": "ann"})
    store.lookup("login").insert("ann", account)
    note = store.objects("note").create(3, {"n": 1})
    folder = compose(6, FOLDER, 1)
    store.mapping("folder_has_notes").add(folder, note, sequence=1)
    store.mapping("account_stars_notes").add(account, note)

    stored = {name: stores(pool) for name, pool in pools.items()}
    before = calls(pools)
    assert cached.objects("note").get(note)["n"] == 1  # type: ignore[index]
    assert cached.lookup("login").get("ann") == account
    assert cached.mapping("folder_has_notes").page(folder).ids == [note]
    assert cached.mapping("folder_has_notes").count(folder) == 1
    assert cached.mapping("account_stars_notes").contains(account, note)
    assert delta(before, pools) == {"notes": 1, "accounts": 1, "lists": 3}  # the gets alone
    assert {name: stores(pool) for name, pool in pools.items()} == stored  # nothing stored
    mapping = cached.mapping("folder_has_notes")
    for name, key in [
        ("notes", cached.objects("note").key(note)),
        ("accounts", cached.lookup("login").key("ann")),
        ("lists", mapping.list_key(folder)),
        ("lists", mapping.count_key(folder)),
        ("lists", cached.mapping("account_stars_notes").edge_key(account, note)),
    ]:
        assert pools[name].get_many([key]) == {}, f"{key} was stored"

    reason[0] = None  # the lease holds again: the list is filled, as is the note
    assert mapping.page(folder).ids == [note]
    assert cached.objects("note").get(note) is not None
    assert mapping.list_key(folder) in pools["lists"].get_many([mapping.list_key(folder)])

    reason[0] = CUT_OFF  # its write drops the lists it would have appended to
    other = store.objects("note").create(3, {"n": 2})
    before = calls(pools)
    mapping.add(folder, other, sequence=2)
    assert "lists" in delta(before, pools)
    assert pools["lists"].get_many([mapping.list_key(folder)]) == {}
    assert mapping.page(folder).ids == [other, note]  # read from MySQL, served
    assert pools["lists"].get_many([mapping.list_key(folder)]) == {}
