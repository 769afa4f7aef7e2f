"""The write fence: a process writes a shard only where the shard map in force puts its
master, never in a move's read-only window, and a swap drains the writes admitted before."""

from __future__ import annotations

import threading

import pytest

from shardstore import ShardReadOnly, Store, Topology, compose

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
        return int(session.query("SELECT COUNT(*) FROM {db}.pins")[0][0])


def test_a_request_pinned_to_the_old_map_cannot_write_where_the_new_one_moved_the_shard(
    backend: Backend, plain_store: Store
) -> None:
    pins = plain_store.objects("pin")
    before = pins.create(3, {"title": "before"})
    with plain_store.pinned():
        plain_store.set_topology(moved(backend, version=2))  # published meanwhile
        with pytest.raises(ShardReadOnly) as refused:
            pins.create(3, {"title": "stale"})
        assert refused.value.host == HOST_A and refused.value.shard_id == 3
        assert f"names {HOST_B} its master" in str(refused.value)
        assert pins.get(before) is not None  # reads go on, by the pinned map
        pins.create(9, {"title": "unmoved"})  # shard 9 is mastered by B in both maps
    old = backend.make_store(two_host_topology(backend.address_a, backend.address_b))
    assert rows(old, 3) == 1 and rows(old, 9) == 1


def test_only_the_shards_in_a_read_only_window_refuse_writes(
    backend: Backend, plain_store: Store
) -> None:
    base = two_host_topology(backend.address_a, backend.address_b, version=2).as_json()
    plain_store.set_topology(Topology.from_json({**base, "read_only": [[2, 3]]}))
    pins = plain_store.objects("pin")
    for shard in (2, 3):
        with pytest.raises(ShardReadOnly, match="read-only while it moves"):
            pins.create(shard, {})
    board_on_3 = compose(3, plain_store.catalog.type("board").type_id, 1)
    with pytest.raises(ShardReadOnly):
        plain_store.mapping("board_has_pins").add(board_on_3, pins.create(4, {}))
    pins.create(4, {})  # its neighbours are writable
    assert rows(plain_store, 2) == rows(plain_store, 3) == 0

    plain_store.set_topology(Topology.from_json({**base, "version": 3}))  # the window ends
    pins.create(2, {})
    assert rows(plain_store, 2) == 1


def test_a_swap_returns_once_the_writes_admitted_under_the_old_map_have_finished(
    backend: Backend, plain_store: Store
) -> None:
    holding, release, swapped = threading.Event(), threading.Event(), threading.Event()

    def slow_write() -> None:
        with plain_store.session(1, write=True) as session:
            session.execute("INSERT INTO {db}.pins (data) VALUES (%s)", ('{"slow": true}',))
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
    plain_store.objects("pin").create(9, {})  # writes under the new map do not wait
    release.set()
    writer.join(10)
    assert swapped.wait(10)
    swapper.join(10)
    old = backend.make_store(two_host_topology(backend.address_a, backend.address_b))
    assert rows(old, 1) == 1  # the admitted write committed
