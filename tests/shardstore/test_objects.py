"""Object tables: create, get, get_many, read-modify-write update, delete."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from shardstore import NotFound, ObjectTooLarge, Store, compose, decompose
from shardstore.objects import MAX_OBJECT_BYTES

from .conftest import HOST_A, plain


def test_create_returns_an_id_on_the_chosen_shard(store: Store) -> None:
    for shard in (0, 7, 8, 15):
        note_id = store.objects("note").create(shard, {"title": f"on {shard}"})
        fields = decompose(note_id)
        assert fields.shard_id == shard
        assert fields.type_id == 1
        assert fields.local_id >= 1
        folder_id = store.objects("folder").create(shard, {"name": "b"})
        assert decompose(folder_id).type_id == 2
        assert decompose(folder_id).shard_id == shard
    account_id = store.objects("account").create(3, {})
    assert decompose(account_id).type_id == 3


def test_create_then_get(store: Store) -> None:
    data = {"title": "Caf\u00e9 \U0001f600", "n": 3, "tags": ["a", "b"], "nested": {"x": None}}
    note_id = store.objects("note").create(9, data)
    assert store.objects("note").get(note_id) == {**data, "id": note_id}
    assert store.objects("note").get(str(note_id)) == {**data, "id": note_id}


def test_ids_are_distinct_per_shard(store: Store) -> None:
    notes = store.objects("note")
    ids = [notes.create(shard, {"i": i}) for i in range(5) for shard in (2, 10)]
    assert len(set(ids)) == len(ids)
    for object_id in ids:
        assert notes.get(object_id) is not None


def test_an_id_key_is_refused_unless_it_is_the_objects_own(store: Store) -> None:
    notes = store.objects("note")
    with pytest.raises(ValueError, match="'id' is reserved"):
        notes.create(1, {"id": 12345, "title": "t"})
    note_id = notes.create(1, {"title": "t"})
    read = notes.get(note_id)
    assert notes.update(note_id, read) == {"id": note_id, "title": "t"}  # written back whole
    with pytest.raises(ValueError, match="'id' is reserved"):
        notes.update(note_id, {"id": note_id + 1})
    assert notes.get(note_id) == {"id": note_id, "title": "t"}


def test_get_missing(store: Store) -> None:
    assert store.objects("note").get(compose(4, 1, 999)) is None
    assert store.objects("note").get(compose(12, 1, 1)) is None


def test_create_rejects_non_mapping(store: Store) -> None:
    with pytest.raises(TypeError):
        store.objects("note").create(1, ["not", "a", "dict"])  # type: ignore[arg-type]


def test_get_many_one_query_per_host_or_shard_in_order(store: Store) -> None:
    notes = store.objects("note")
    by_shard = {
        shard: [notes.create(shard, {"s": shard, "i": i}) for i in range(3)]
        for shard in (1, 5, 9, 14)
    }
    missing = compose(5, 1, 10_000)
    order = [
        by_shard[9][2], by_shard[1][0], missing, by_shard[14][1], by_shard[1][2],
        by_shard[5][0], by_shard[9][0], by_shard[5][2],
    ]  # fmt: skip
    with store.count_queries() as queries:
        found = notes.get_many(order)
    # Shards 9, 1, 14, 5: on MySQL one UNION ALL per host (the two hosts split the 16
    # shards in halves), on SQLite one query per shard (a file each).
    expected = 2 if store.backends()[HOST_A].spans_shards else 4
    assert queries.count == expected, queries.statements
    assert [obj["id"] for obj in found] == [i for i in order if i != missing]
    for obj in found:
        assert obj["s"] == decompose(obj["id"]).shard_id


def test_get_many_one_shard_is_one_query(store: Store) -> None:
    notes = store.objects("note")
    ids = [notes.create(3, {"i": i}) for i in range(50)]
    with store.count_queries() as queries:
        found = notes.get_many(list(reversed(ids)))
    assert queries.count == 1
    assert [obj["i"] for obj in found] == list(range(49, -1, -1))


def test_get_many_accepts_strings_and_empty(store: Store) -> None:
    notes = store.objects("note")
    a, b = notes.create(0, {"k": "a"}), notes.create(8, {"k": "b"})
    assert [o["k"] for o in notes.get_many([str(b), str(a)])] == ["b", "a"]
    with store.count_queries() as queries:
        assert notes.get_many([]) == []
    assert queries.count == 0


def test_get_many_leaves_out_soft_deleted(store: Store) -> None:
    notes = store.objects("note")
    a, b, c = (notes.create(2, {"k": k}) for k in "abc")
    assert notes.delete(b) is True
    assert [o["k"] for o in notes.get_many([a, b, c])] == ["a", "c"]
    assert [o["k"] for o in notes.get_many([a, b, c], include_inactive=True)] == ["a", "b", "c"]


def test_scan_walks_one_shard_in_id_order_in_batches(store: Store) -> None:
    notes = store.objects("note")
    here = [notes.create(5, {"k": n}) for n in range(7)]
    notes.create(6, {"k": "elsewhere"})
    store.objects("folder").create(5, {"k": "another type"})
    assert notes.delete(here[3]) is True
    batches = list(notes.scan(5, batch=3))
    assert [[o["id"] for o in b] for b in batches] == [here[0:3], here[4:6], here[6:7]]
    assert [o["k"] for b in batches for o in b] == [0, 1, 2, 4, 5, 6]
    every = [o["id"] for b in notes.scan(5, include_inactive=True) for o in b]
    assert every == here
    assert list(notes.scan(7)) == []


def test_update_merges_a_dict(store: Store) -> None:
    notes = store.objects("note")
    note_id = notes.create(6, {"title": "old", "keep": 1})
    new = notes.update(note_id, {"title": "new", "added": [1, 2]})
    assert new == {"id": note_id, "title": "new", "keep": 1, "added": [1, 2]}
    assert notes.get(note_id) == new


def test_update_with_a_function(store: Store) -> None:
    notes = store.objects("note")
    note_id = notes.create(11, {"likes": 4, "drop": True})

    def edit(data: dict[str, Any]) -> None:
        data["likes"] += 1
        del data["drop"]

    assert notes.update(note_id, edit) == {"id": note_id, "likes": 5}
    assert notes.get(note_id) == {"id": note_id, "likes": 5}


def test_update_that_fails_changes_nothing(store: Store) -> None:
    notes = store.objects("note")
    note_id = notes.create(6, {"n": 1})

    def explode(data: dict[str, Any]) -> None:
        data["n"] = 2
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        notes.update(note_id, explode)
    assert notes.get(note_id) == {"id": note_id, "n": 1}
    # The connection went back to the pool in a usable state.
    assert notes.update(note_id, {"n": 3})["n"] == 3
    assert notes.get(note_id) == {"id": note_id, "n": 3}


def test_update_missing_raises_not_found(store: Store) -> None:
    with pytest.raises(NotFound):
        store.objects("note").update(compose(3, 1, 77), {"x": 1})
    assert issubclass(NotFound, LookupError)


@pytest.mark.parametrize("shard", [4, 12])
def test_concurrent_updates_lose_nothing(store: Store, shard: int) -> None:
    notes = store.objects("note")
    note_id = notes.create(shard, {"count": 0})
    threads, increments = 8, 20
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def bump(data: dict[str, Any]) -> None:
        data["count"] += 1

    def work() -> None:
        try:
            start.wait()
            for _ in range(increments):
                notes.update(note_id, bump)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert notes.get(note_id)["count"] == threads * increments  # type: ignore[index]


def test_soft_delete(store: Store) -> None:
    notes = store.objects("note")
    note_id = notes.create(10, {"title": "t"})
    assert notes.delete(note_id) is True
    assert notes.get(note_id) is None
    assert notes.get(note_id, include_inactive=True) == {
        "id": note_id,
        "title": "t",
        "active": False,
    }
    assert notes.delete(note_id) is False  # already gone
    with pytest.raises(NotFound):
        notes.update(note_id, {"title": "u"})
    assert notes.get(note_id, include_inactive=True)["title"] == "t"  # type: ignore[index]


def test_hard_delete(store: Store) -> None:
    notes = store.objects("note")
    note_id = notes.create(10, {"title": "t"})
    other = notes.create(10, {"title": "other"})
    assert notes.delete(note_id, hard=True) is True
    assert notes.get(note_id, include_inactive=True) is None
    assert notes.get_many([note_id], include_inactive=True) == []
    assert notes.delete(note_id, hard=True) is False
    assert notes.delete(note_id) is False
    assert notes.get(other) == {"id": other, "title": "other"}


def test_hard_delete_of_a_soft_deleted_object(store: Store) -> None:
    notes = store.objects("note")
    note_id = notes.create(2, {})
    notes.delete(note_id)
    assert notes.delete(note_id, hard=True) is True
    assert notes.get(note_id, include_inactive=True) is None


def _blob(size: int) -> dict[str, str]:
    """A dict whose compact JSON is exactly ``size`` bytes."""
    overhead = len('{"x":""}')
    return {"x": "a" * (size - overhead)}


def test_object_too_large_on_create(store: Store) -> None:
    with pytest.raises(ObjectTooLarge):
        store.objects("note").create(5, _blob(MAX_OBJECT_BYTES + 1))
    with plain(store).session(5) as session:
        assert session.query("SELECT COUNT(*) FROM {db}.notes")[0][0] == 0
    assert issubclass(ObjectTooLarge, ValueError)


def test_object_at_the_limit_round_trips(store: Store) -> None:
    """The same limit on every backend: an object of exactly the limit is stored whole."""
    data = _blob(MAX_OBJECT_BYTES)
    note_id = store.objects("note").create(13, data)
    assert store.objects("note").get(note_id) == {**data, "id": note_id}


def test_non_ascii_counts_in_bytes(store: Store) -> None:
    # json.dumps escapes non-ASCII as \\uXXXX: 6 bytes per character.
    with pytest.raises(ObjectTooLarge):
        store.objects("note").create(5, {"x": "\u00e9" * (MAX_OBJECT_BYTES // 6 + 1)})


def test_object_too_large_on_update_changes_nothing(store: Store) -> None:
    notes = store.objects("note")
    note_id = notes.create(5, {"n": 1})
    with pytest.raises(ObjectTooLarge):
        notes.update(note_id, _blob(MAX_OBJECT_BYTES + 1))
    assert notes.get(note_id) == {"id": note_id, "n": 1}


def test_unknown_type(store: Store) -> None:
    from shardstore import UnknownType

    with pytest.raises(UnknownType):
        store.objects("notes")


def test_get_with_counts_is_one_query(store: Store) -> None:
    folders = store.objects("folder")
    folder = folders.create(7, {"name": "b"})
    empty = folders.create(7, {"name": "empty"})
    other = folders.create(8, {"name": "other"})
    for local in range(1, 6):
        store.mapping("folder_has_notes").add(folder, compose(7, 1, local))
    store.mapping("folder_has_notes").add(other, compose(7, 1, 1))
    store.mapping("account_watches_folders").add(compose(7, 3, 1), folder)
    with store.count_queries() as queries:
        got = folders.get(folder, counts=("folder_has_notes", "folder_watched_by_accounts"))
    assert queries.count == 1
    assert got == {
        "id": folder,
        "name": "b",
        "counts": {"folder_has_notes": 5, "folder_watched_by_accounts": 1},
    }
    with store.count_queries() as queries:
        many = folders.get_many([other, empty, folder], counts=("folder_has_notes",))
    assert queries.count == 2
    assert [(o["name"], o["counts"]) for o in many] == [
        ("other", {"folder_has_notes": 1}),
        ("empty", {"folder_has_notes": 0}),
        ("b", {"folder_has_notes": 5}),
    ]
    # Counts are read, never stored.
    folders.update(folder, {"name": "renamed"})
    assert folders.get(folder) == {"id": folder, "name": "renamed"}


def test_counts_of_a_relation_from_another_type_are_refused(store: Store) -> None:
    folder = store.objects("folder").create(1, {})
    with pytest.raises(ValueError):
        store.objects("folder").get(folder, counts=("account_has_notes",))


def test_a_field_named_counts_is_not_silently_dropped(store: Store) -> None:
    """Stored data comes back whole, or the write is refused: never a silent loss."""
    notes = store.objects("note")
    data = {"title": "t", "counts": {"clicks": 3}}
    try:
        note = notes.create(2, data)
    except ValueError:
        return
    assert notes.get(note) == {**data, "id": note}
