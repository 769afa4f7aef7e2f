"""init_shards: every shard's tables, idempotent, with progress."""

from __future__ import annotations

import threading

import pytest

from shardstore import Store, init_shards

from .conftest import HOST_A, HOST_B, Backend, two_host_topology


@pytest.fixture
def store(plain_store: Store) -> Store:
    """Schema creation works on the plain store's backends."""
    return plain_store


def test_init_is_idempotent_and_reports_progress(store: Store) -> None:
    pin = store.objects("pin").create(4, {"title": "kept"})
    board = store.objects("board").create(11, {})
    store.mapping("board_has_pins").add(board, pin)
    store.lookup("username").insert("kept", store.objects("user").create(0, {}))

    calls: list[tuple[int, int]] = []
    lock = threading.Lock()

    def progress(done: int, total: int) -> None:
        with lock:
            calls.append((done, total))

    assert init_shards(store, progress=progress) == 16
    assert sorted(calls) == [(n, 16) for n in range(1, 17)]
    assert init_shards(store) == 16  # and once more

    assert store.objects("pin").get(pin) == {"id": pin, "title": "kept"}
    assert store.mapping("board_has_pins").page(board).ids == [pin]
    assert store.mapping("board_has_pins").count(board) == 1
    assert store.mapping("pin_owned_by_board").page(pin).ids == [board]
    assert store.lookup("username").get("KEPT") is not None
    # New rows do not reuse old local ids.
    assert store.objects("pin").create(4, {}) != pin


def test_init_one_host(store: Store) -> None:
    calls: list[tuple[int, int]] = []
    assert init_shards(store, hosts=[HOST_B], progress=lambda d, t: calls.append((d, t))) == 8
    assert sorted(calls) == [(n, 8) for n in range(1, 9)]
    assert init_shards(store, hosts=[HOST_A, HOST_B]) == 16
    assert init_shards(store, hosts=[]) == 0


def test_init_creates_every_table_on_every_shard(store: Store) -> None:
    for table in [*store.catalog.tables(), "mapping_counts"]:
        for shard in range(16):
            with store.session(shard) as session:
                assert list(session.query(f"SELECT COUNT(*) FROM {{db}}.{table}")) == [(0,)], table


def test_init_fresh_sqlite_hosts(backend: Backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    if backend.kind != "sqlite":
        pytest.skip("the mysql shard databases are created once per session, by the fixture")
    a, b = tmp_path / "freshA", tmp_path / "freshB"
    fresh = backend.make_store(two_host_topology(f"sqlite://{a}", f"sqlite://{b}"))
    assert init_shards(fresh) == 16
    assert sorted(p.name for p in a.glob("*.sqlite3")) == [f"db{n:05d}.sqlite3" for n in range(8)]
    assert sorted(p.name for p in b.glob("*.sqlite3")) == [
        f"db{n:05d}.sqlite3" for n in range(8, 16)
    ]
    pin = fresh.objects("pin").create(15, {})
    assert fresh.objects("pin").get(pin) == {"id": pin}
