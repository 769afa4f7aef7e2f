"""The write fence: a process writes a shard only where the shard map in force puts its
master, never in a move's read-only window, and a swap drains the writes admitted before."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from shardstore import ShardMoving, ShardReadOnly, Store, Topology, compose, fence
from shardstore.exceptions import WritesInFlight

from .conftest import HOST_A, HOST_B, RANGE_A, RANGE_B, Backend, two_host_topology


def moved(backend: Backend, *, version: int, **extra: object) -> Topology:
    """The test map with shards 0..7 handed to host B (as a failover would)."""
    document = two_host_topology(backend.address_a, backend.address_b, version=version).as_json()
    document["ranges"] = [
        {"range": list(RANGE_A), "master": HOST_B},
        {"range": list(RANGE_B), "master": HOST_B},
    ]
    return Topology.from_json({**document, **extra})


def rows(store: Store, shard: int) -> int:
    with store.session(shard) as session:
        return int(session.query("SELECT COUNT(*) FROM {db}.notes")[0][0])


def test_a_request_pinned_to_the_old_map_cannot_write_where_the_new_one_moved_the_shard(
    backend: Backend, plain_store: Store
) -> None:
    notes = plain_store.objects("note")
    before = notes.create(3, {"title": "before"})
    with plain_store.pinned():
        plain_store.set_topology(moved(backend, version=2))  # published meanwhile
        with pytest.raises(ShardReadOnly) as refused:
            notes.create(3, {"title": "stale"})
        assert refused.value.host == HOST_A and refused.value.shard_id == 3
        assert f"names {HOST_B} its master" in str(refused.value)
        assert notes.get(before) is not None  # reads go on, by the pinned map
        notes.create(9, {"title": "unmoved"})  # shard 9 is mastered by B in both maps
    old = backend.make_store(two_host_topology(backend.address_a, backend.address_b))
    assert rows(old, 3) == 1 and rows(old, 9) == 1


def test_only_the_shards_in_a_read_only_window_refuse_writes(
    backend: Backend, plain_store: Store
) -> None:
    base = two_host_topology(backend.address_a, backend.address_b, version=2).as_json()
    plain_store.set_topology(Topology.from_json({**base, "read_only": [[2, 3]]}))
    plain_store.hold_seconds = 0  # refused at once, not held until the window ends
    notes = plain_store.objects("note")
    for shard in (2, 3):
        with pytest.raises(ShardReadOnly, match="read-only while it moves"):
            notes.create(shard, {})
    folder_on_3 = compose(3, plain_store.catalog.type("folder").type_id, 1)
    with pytest.raises(ShardReadOnly):
        plain_store.mapping("folder_has_notes").add(folder_on_3, notes.create(4, {}))
    notes.create(4, {})  # its neighbours are writable
    assert rows(plain_store, 2) == rows(plain_store, 3) == 0

    plain_store.set_topology(Topology.from_json({**base, "version": 3}))  # the window ends
    notes.create(2, {})
    assert rows(plain_store, 2) == 1


def test_a_swap_returns_once_the_writes_admitted_under_the_old_map_have_finished(
    backend: Backend, plain_store: Store
) -> None:
    holding, release, swapped = threading.Event(), threading.Event(), threading.Event()

    def slow_write() -> None:
        with plain_store.session(1, write=True) as session:
            session.execute("INSERT INTO {db}.notes (data) VALUES (%s)", ('{"slow": true}',))
            holding.set()
            release.wait(10)

    def swap() -> None:
        plain_store.set_topology(moved(backend, version=2))
        swapped.set()

    writer = threading.Thread(target=slow_write)
    writer.start()
    assert holding.wait(10)
    swapper = threading.Thread(target=swap)
    swapper.start()
    assert not swapped.wait(0.3)  # the write admitted under v1 is still in flight
    plain_store.objects("note").create(9, {})  # writes under the new map do not wait
    release.set()
    writer.join(10)
    assert swapped.wait(10)
    swapper.join(10)
    old = backend.make_store(two_host_topology(backend.address_a, backend.address_b))
    assert rows(old, 1) == 1  # the admitted write committed


def test_a_swap_that_cannot_drain_the_old_writes_says_so(
    backend: Backend, plain_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new map is in force all the same, but the swap raises WritesInFlight, so the
    process does not report it followed (an operation waiting on it stops)."""
    monkeypatch.setattr(fence, "DRAIN_SECONDS", 0.2)
    holding, release = threading.Event(), threading.Event()

    def slow_write() -> None:
        with plain_store.session(1, write=True) as session:
            session.execute("INSERT INTO {db}.notes (data) VALUES (%s)", ('{"slow": true}',))
            holding.set()
            release.wait(10)

    writer = threading.Thread(target=slow_write)
    writer.start()
    assert holding.wait(10)
    try:
        with pytest.raises(WritesInFlight, match="shard map v2"):
            plain_store.set_topology(moved(backend, version=2))
        assert plain_store.topology.version == 2
    finally:
        release.set()
        writer.join(10)


def in_window(backend: Backend, *, version: int) -> Topology:
    """The test map with shard 3 in a split's read-only window."""
    base = two_host_topology(backend.address_a, backend.address_b, version=version).as_json()
    return Topology.from_json({**base, "read_only": [[3, 3]]})


def hand_over(backend: Backend, shard: int) -> None:
    """Give host B a copy of ``shard``, as a split's replica has (on MySQL A and B are one
    server; on SQLite each host is its own directory of files)."""
    if backend.kind == "sqlite":
        name = f"db{shard:05d}.sqlite3"
        source, target = (
            Path(a.removeprefix("sqlite://")) for a in (backend.address_a, backend.address_b)
        )
        for file in source.glob(f"{name}*"):  # with its write-ahead log
            shutil.copy(file, target / file.name)


def later(seconds: float, store: Store, topology: Topology) -> threading.Timer:
    """Swap ``topology`` into ``store`` after ``seconds``, as a published map would arrive."""
    timer = threading.Timer(seconds, store.set_topology, args=(topology,))
    timer.start()
    return timer


@pytest.mark.parametrize("write", ["create", "update"])
def test_a_write_that_meets_a_move_waits_for_it_then_goes_to_the_new_master(
    backend: Backend, plain_store: Store, write: str
) -> None:
    notes = plain_store.objects("note")
    note = notes.create(3, {"title": "before"})
    hand_over(backend, 3)
    plain_store.set_topology(in_window(backend, version=2))
    with plain_store.pinned():
        arrival = later(0.2, plain_store, moved(backend, version=3))
        if write == "create":  # a read session, admitted at its first INSERT
            note = notes.create(3, {"title": "held"})
        else:  # a write transaction, admitted before it begins
            notes.update(note, {"title": "held"})
        assert plain_store.topology.version == 3  # the request goes on by the new map
        arrival.join()
    # Only the shard's master by v3 (host B) was admitted; on SQLite, B is its own files.
    assert notes.get(note)["title"] == "held"  # type: ignore[index]
    if backend.kind == "sqlite":
        old = backend.make_store(two_host_topology(backend.address_a, backend.address_b))
        on_a = old.objects("note").get(note)
        assert on_a is None if write == "create" else on_a == {"id": note, "title": "before"}


def test_a_write_held_past_its_limit_is_refused_and_writes_nothing(
    backend: Backend, plain_store: Store
) -> None:
    plain_store.set_topology(in_window(backend, version=2))
    plain_store.hold_seconds = 0.2
    with pytest.raises(ShardMoving, match="read-only while it moves"):
        plain_store.objects("note").create(3, {})
    assert rows(plain_store, 3) == 0


def test_a_session_that_has_read_is_refused_at_once_not_moved(
    backend: Backend, plain_store: Store
) -> None:
    """Its reads came from the old host: a write after them must not go to another."""
    hand_over(backend, 3)
    plain_store.set_topology(in_window(backend, version=2))
    arrival = later(0.2, plain_store, moved(backend, version=3))
    with plain_store.session(3) as session, pytest.raises(ShardMoving):
        session.query("SELECT COUNT(*) FROM {db}.notes")
        session.execute("INSERT INTO {db}.notes (data) VALUES (%s)", ("{}",))
    arrival.join()
    assert rows(plain_store, 3) == 0


def test_no_more_writes_wait_than_the_hold_limit(
    backend: Backend, plain_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fence, "HOLD_LIMIT", 0)
    hand_over(backend, 3)
    plain_store.set_topology(in_window(backend, version=2))
    arrival = later(0.2, plain_store, moved(backend, version=3))
    with pytest.raises(ShardMoving):  # refused at once, though the window ends soon
        plain_store.objects("note").create(3, {})
    arrival.join()
    assert rows(plain_store, 3) == 0
