"""init_shards: every shard's tables, idempotent, with progress."""

from __future__ import annotations

import threading

import pytest

from shardstore import Store, idempotency, init_shards

from .conftest import HOST_A, HOST_B, Backend, two_host_topology


@pytest.fixture
def store(plain_store: Store) -> Store:
    """Schema creation works on the plain store's backends."""
    return plain_store


def test_init_is_idempotent_and_reports_progress(store: Store) -> None:
    note = store.objects("note").create(4, {"title": "kept"})
    folder = store.objects("folder").create(11, {})
    store.mapping("folder_has_notes").add(folder, note)
    store.lookup("login").insert("kept", store.objects("account").create(0, {}))

    calls: list[tuple[int, int]] = []
    lock = threading.Lock()

    def progress(done: int, total: int) -> None:
        with lock:
            calls.append((done, total))

    assert init_shards(store, progress=progress) == 16
    assert sorted(calls) == [(n, 16) for n in range(1, 17)]
    assert init_shards(store) == 16  # and once more

    assert store.objects("note").get(note) == {"id": note, "title": "kept"}
    assert store.mapping("folder_has_notes").page(folder).ids == [note]
    assert store.mapping("folder_has_notes").count(folder) == 1
    assert store.mapping("note_in_folder").page(note).ids == [folder]
    assert store.lookup("login").get("KEPT") is not None
    # New rows do not reuse old local ids.
    assert store.objects("note").create(4, {}) != note


def test_init_one_host(store: Store) -> None:
    calls: list[tuple[int, int]] = []
    assert init_shards(store, hosts=[HOST_B], progress=lambda d, t: calls.append((d, t))) == 8
    assert sorted(calls) == [(n, 8) for n in range(1, 9)]
    assert init_shards(store, hosts=[HOST_A, HOST_B]) == 16
    assert init_shards(store, hosts=[]) == 0


def test_init_creates_every_table_on_every_shard(store: Store) -> None:
    for table in [*store.catalog.tables(), "mapping_counts", *idempotency.TABLES]:
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
    note = fresh.objects("note").create(15, {})
    assert fresh.objects("note").get(note) == {"id": note}
