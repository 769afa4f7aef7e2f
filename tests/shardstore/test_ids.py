"""IDs: 2 reserved bits | 16 shard | 10 type | 36 local, and type checking."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardstore import InvalidId, ObjectId, Store, WrongType, compose, decompose
from shardstore.ids import MAX_LOCAL_ID, MAX_OBJECT_ID, MAX_SHARD_ID, MAX_TYPE_ID

SEED = 241294492511762325

shards = st.integers(0, 2**16 - 1)
types = st.integers(0, 2**10 - 1)
locals_ = st.integers(0, 2**36 - 1)


def test_field_widths() -> None:
    assert (MAX_SHARD_ID, MAX_TYPE_ID, MAX_LOCAL_ID) == (2**16 - 1, 2**10 - 1, 2**36 - 1)
    assert MAX_OBJECT_ID == 2**62 - 1


def test_seed_vector() -> None:
    fields = decompose(SEED)
    assert fields == (3429, 1, 7075733)
    assert (fields.shard_id, fields.type_id, fields.local_id) == (3429, 1, 7075733)
    assert isinstance(fields, ObjectId)
    assert compose(3429, 1, 7075733) == SEED
    assert SEED == 3429 << 46 | 1 << 36 | 7075733


@given(shards, types, locals_)
def test_compose_decompose_round_trip(shard: int, type_id: int, local: int) -> None:
    object_id = compose(shard, type_id, local)
    assert 0 <= object_id < 2**62
    assert object_id == shard << 46 | type_id << 36 | local
    assert decompose(object_id) == (shard, type_id, local)
    assert decompose(str(object_id)) == (shard, type_id, local)


@given(st.integers(0, 2**62 - 1))
def test_decompose_compose_round_trip(object_id: int) -> None:
    assert compose(*decompose(object_id)) == object_id


@pytest.mark.parametrize(
    "fields",
    [
        (0, 0, 0),
        (MAX_SHARD_ID, MAX_TYPE_ID, MAX_LOCAL_ID),
        (MAX_SHARD_ID, 0, 0),
        (0, 0, MAX_LOCAL_ID),
    ],
)
def test_extremes(fields: tuple[int, int, int]) -> None:
    assert decompose(compose(*fields)) == fields


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ((-1, 1, 1), "shard_id"),
        ((1, -1, 1), "type_id"),
        ((1, 1, -1), "local_id"),
        ((2**16, 1, 1), "shard_id"),
        ((1, 2**10, 1), "type_id"),
        ((1, 1, 2**36), "local_id"),
        ((1.0, 1, 1), "shard_id"),
        ((1, None, 1), "type_id"),
        ((1, 1, True), "local_id"),
        ((False, 1, 1), "shard_id"),
        (("1", 1, 1), "shard_id"),
    ],
)
def test_compose_rejects(args: tuple, field: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(InvalidId, match=field):
        compose(*args)


@given(st.one_of(st.integers(max_value=-1), st.integers(min_value=2**16)), types, locals_)
def test_compose_rejects_any_bad_shard(shard: int, type_id: int, local: int) -> None:
    with pytest.raises(InvalidId, match="shard_id"):
        compose(shard, type_id, local)


@given(shards, st.one_of(st.integers(max_value=-1), st.integers(min_value=2**10)), locals_)
def test_compose_rejects_any_bad_type(shard: int, type_id: int, local: int) -> None:
    with pytest.raises(InvalidId, match="type_id"):
        compose(shard, type_id, local)


@given(shards, types, st.one_of(st.integers(max_value=-1), st.integers(min_value=2**36)))
def test_compose_rejects_any_bad_local(shard: int, type_id: int, local: int) -> None:
    with pytest.raises(InvalidId, match="local_id"):
        compose(shard, type_id, local)


def test_invalid_id_is_a_value_error() -> None:
    assert issubclass(InvalidId, ValueError)
    with pytest.raises(ValueError):
        decompose(-1)


@pytest.mark.parametrize(
    ("value", "field"),
    [
        (-1, "negative"),
        (-(2**70), "negative"),
        (2**62, "reserved bits"),
        (2**63, "reserved bits"),
        (2**64 - 1, "reserved bits"),
        (2**64, "reserved bits"),
        (SEED | 1 << 62, "reserved bits"),
        (1.0, "object_id"),
        (float(SEED), "object_id"),
        (None, "object_id"),
        (True, "object_id"),
        (False, "object_id"),
        (b"12", "object_id"),
        ("12a", "object_id"),
        (" ", "object_id"),
        ("", "object_id"),
        ("1e5", "object_id"),
        ("-5", "object_id"),
        ("+5", "object_id"),
        ("0x10", "object_id"),
        ("1_000", "object_id"),
        ("1.0", "object_id"),
        ("\u0663", "object_id"),  # ARABIC-INDIC DIGIT THREE
        ("\uff11\uff12", "object_id"),  # fullwidth digits
        ("1" * 30, "object_id"),
        (str(2**62), "reserved bits"),
        # One spelling per ID: no leading zeros, signs or surrounding spaces.
        ("0123", "object_id"),
        ("00", "object_id"),
        ("00241294492511762325", "object_id"),
        (" 123", "object_id"),
        ("123 ", "object_id"),
        ("123\n", "object_id"),
        ("\t123", "object_id"),
        ("+123", "object_id"),
        ("-0", "object_id"),
        ("\u0661\u0662\u0663", "object_id"),  # ARABIC-INDIC 123
    ],
)
def test_decompose_rejects(value: object, field: str) -> None:
    with pytest.raises(InvalidId, match=field):
        decompose(value)  # type: ignore[arg-type]


@given(st.integers(min_value=2**62))
def test_decompose_rejects_reserved_bits(value: int) -> None:
    with pytest.raises(InvalidId, match="reserved bits"):
        decompose(value)
    with pytest.raises(InvalidId):
        decompose(str(value))


@given(st.text())
def test_decompose_of_text_is_an_id_or_invalid_id(text: str) -> None:
    try:
        fields = decompose(text)
    except InvalidId:
        canonical = re.fullmatch(r"0|[1-9][0-9]*", text, flags=re.ASCII) is not None
        assert not canonical or int(text) >= 2**62
    else:
        assert compose(*fields) == int(text)
        assert str(int(text)) == text  # the one spelling of the ID


@pytest.mark.parametrize("text", ["241294492511762325", "0", "7", "4611686018427387903"])
def test_decompose_accepts_canonical_decimal_strings(text: str) -> None:
    assert decompose(text) == decompose(int(text))


def test_wrong_type_for_an_object_table(store: Store) -> None:
    note_id = store.objects("note").create(0, {"title": "a note"})
    with pytest.raises(WrongType, match="note"):
        store.objects("folder").get(note_id)
    with pytest.raises(WrongType):
        store.objects("folder").get_many([note_id])
    with pytest.raises(WrongType):
        store.objects("folder").update(note_id, {"x": 1})
    with pytest.raises(WrongType):
        store.objects("folder").delete(note_id, hard=True)
    assert issubclass(WrongType, InvalidId)
    # The note is untouched.
    assert store.objects("note").get(note_id) == {"id": note_id, "title": "a note"}


def test_wrong_type_for_mapping_ends(store: Store) -> None:
    folder = store.objects("folder").create(1, {})
    note = store.objects("note").create(1, {})
    folders_notes = store.mapping("folder_has_notes")
    with pytest.raises(WrongType):
        folders_notes.add(note, folder)  # ends swapped
    with pytest.raises(WrongType):
        folders_notes.add(folder, folder)
    with pytest.raises(WrongType):
        folders_notes.page(note)
    with pytest.raises(WrongType):
        folders_notes.contains(folder, folder)
    with pytest.raises(WrongType):
        folders_notes.filter(folder, [note, folder])
    with pytest.raises(WrongType):
        folders_notes.count(note)
    assert folders_notes.count(folder) == 0
    assert store.mapping("note_in_folder").count(note) == 0


def test_malformed_ids_at_the_store(store: Store) -> None:
    with pytest.raises(InvalidId):
        store.objects("note").get("12a")
    with pytest.raises(InvalidId):
        store.objects("note").get(-3)
    with pytest.raises(InvalidId):
        store.mapping("folder_has_notes").page(2**62)
