"""A host that cannot be reached: a typed error naming shard and host, nothing written elsewhere."""

from __future__ import annotations

import pytest

from shardstore import ShardUnavailable, Store, Topology, UnknownShard, compose

from .conftest import HOST_A, HOST_B, Backend, two_host_topology


@pytest.fixture
def store(plain_store: Store) -> Store:
    """Errors of a down host are raised by the plain store's backends."""
    return plain_store


NOTE, FOLDER, ACCOUNT = 1, 2, 3


def everything_on(store: Store, shards: range) -> dict[str, int]:
    """Row counts of every non-empty table on ``shards`` (read through a healthy store)."""
    tables = [*store.catalog.tables(), "mapping_counts"]
    counts = {}
    for shard in shards:
        with store.session(shard) as session:
            for table in tables:
                n = int(session.query(f"SELECT COUNT(*) FROM {{db}}.{table}")[0][0])
                if n:
                    counts[f"{shard}.{table}"] = n
    return counts


@pytest.fixture
def half_down(backend: Backend, store: Store) -> Store:
    """The same shards, but host B (shards 8..15) cannot be reached."""
    return backend.make_store(two_host_topology(backend.address_a, backend.unreachable()))


def _assert_names(error: ShardUnavailable, shard: int) -> None:
    assert error.shard_id == shard
    assert error.host == HOST_B
    assert f"shard {shard}" in str(error)
    assert HOST_B in str(error)


def test_create_on_a_down_host(store: Store, half_down: Store) -> None:
    with pytest.raises(ShardUnavailable) as info:
        half_down.objects("note").create(9, {"title": "lost"})
    _assert_names(info.value, 9)
    assert everything_on(store, range(16)) == {}
    # Host A still works through the same store.
    note = half_down.objects("note").create(3, {"title": "kept"})
    assert store.objects("note").get(note) == {"id": note, "title": "kept"}


def test_reads_on_a_down_host(store: Store, half_down: Store) -> None:
    up = store.objects("note").create(1, {})
    down = store.objects("note").create(12, {})
    with pytest.raises(ShardUnavailable) as info:
        half_down.objects("note").get(down)
    _assert_names(info.value, 12)
    with pytest.raises(ShardUnavailable):
        half_down.objects("note").get_many([up, down])  # no silently partial answer
    with pytest.raises(ShardUnavailable):
        half_down.objects("note").update(down, {"x": 1})
    assert store.objects("note").get(down) == {"id": down}


def test_mapping_whose_from_shard_is_down(store: Store, half_down: Store) -> None:
    folder, note = compose(10, FOLDER, 1), compose(2, NOTE, 1)
    with pytest.raises(ShardUnavailable) as info:
        half_down.mapping("folder_has_notes").add(folder, note)
    _assert_names(info.value, 10)
    assert everything_on(store, range(16)) == {}  # the inverse was not written either
    with pytest.raises(ShardUnavailable):
        half_down.mapping("folder_has_notes").page(folder)
    with pytest.raises(ShardUnavailable):
        half_down.mapping("folder_has_notes").count(folder)


def test_mapping_whose_to_shard_is_down(store: Store, half_down: Store) -> None:
    folder, note = compose(2, FOLDER, 1), compose(10, NOTE, 1)
    with pytest.raises(ShardUnavailable) as info:
        half_down.mapping("folder_has_notes").add(folder, note)
    _assert_names(info.value, 10)
    assert not any(key.startswith("10.") for key in everything_on(store, range(16)))


def test_lookup_on_a_down_host(store: Store, half_down: Store) -> None:
    logins = half_down.lookup("login")
    key = next(f"user{i}" for i in range(1000) if logins.shard_of(f"user{i}") >= 8)
    shard = logins.shard_of(key)
    with pytest.raises(ShardUnavailable) as info:
        logins.insert(key, compose(1, ACCOUNT, 1))
    _assert_names(info.value, shard)
    with pytest.raises(ShardUnavailable):
        logins.get(key)
    assert everything_on(store, range(16)) == {}


def test_whole_store_down(backend: Backend) -> None:
    down = backend.make_store(two_host_topology(backend.unreachable(), backend.unreachable()))
    with pytest.raises(ShardUnavailable) as info:
        down.objects("account").create(0, {})
    assert info.value.host == HOST_A
    assert "shard 0" in str(info.value)


def test_shard_missing_on_a_reachable_host(backend: Backend, store: Store) -> None:
    """A shard the topology names but `init` never created: unavailable, with the hint."""
    wider = Topology.from_json(
        {
            "version": 2,
            "shard_count": 32,
            "hosts": {HOST_A: backend.address_a, HOST_B: backend.address_b},
            "ranges": [
                {"range": [0, 7], "master": HOST_A},
                {"range": [8, 31], "master": HOST_B},
            ],
            "open": [[16, 31]],
            "lookup_shards": 16,
        }
    )
    wide = backend.make_store(wider)
    with pytest.raises(ShardUnavailable, match="shardstore init") as info:
        wide.objects("note").create(20, {})
    assert info.value.shard_id == 20
    assert info.value.host == HOST_B
    # The 16 shards that exist still serve.
    note = wide.objects("note").create(15, {})
    assert store.objects("note").get(note) == {"id": note}


def test_unknown_shard_in_an_id(store: Store) -> None:
    with pytest.raises(UnknownShard, match="shard 100"):
        store.objects("note").get(compose(100, NOTE, 1))
    with pytest.raises(UnknownShard):
        store.objects("note").create(16, {})
    assert everything_on(store, range(16)) == {}


def test_unavailable_is_not_an_invalid_id() -> None:
    from shardstore import InvalidId, ShardStoreError

    assert issubclass(ShardUnavailable, ShardStoreError)
    assert not issubclass(ShardUnavailable, InvalidId)
