"""Mapping tables: add/remove, ordered pages with cursors, counts, contains, filter, inverses."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardstore import InvalidCursor, Page, Store, compose
from shardstore.cursors import decode, encode

from .conftest import plain

NOTE, FOLDER, ACCOUNT = 1, 2, 3


def notes(shard: int, n: int, start: int = 1) -> list[int]:
    """Note IDs on ``shard`` (mappings do not need the objects to exist)."""
    return [compose(shard, NOTE, local) for local in range(start, start + n)]


def folder(shard: int, local: int = 1) -> int:
    return compose(shard, FOLDER, local)


def raw_rows(store: Store, shard: int, table: str) -> list[tuple[int, int, int]]:
    with plain(store).session(shard) as session:
        rows = session.query(f"SELECT from_id, to_id, sequence FROM {{db}}.{table} ORDER BY 1, 2")
    return [(int(f), int(t), int(s)) for f, t, s in rows]


def test_add_twice_keeps_one_row(store: Store) -> None:
    has_notes = store.mapping("account_has_notes")
    account, note = compose(3, ACCOUNT, 1), compose(3, NOTE, 1)
    assert has_notes.add(account, note, sequence=10) is True
    assert has_notes.add(account, note, sequence=20) is False
    assert has_notes.count(account) == 1
    assert raw_rows(store, 3, "account_has_notes") == [(account, note, 10)]
    assert has_notes.page(account) == Page([note], None)


def test_remove(store: Store) -> None:
    has_notes = store.mapping("account_has_notes")
    account = compose(9, ACCOUNT, 1)
    a, b = notes(9, 2)
    has_notes.add(account, a)
    has_notes.add(account, b)
    assert has_notes.remove(account, a) is True
    assert has_notes.remove(account, a) is False
    assert has_notes.count(account) == 1
    assert has_notes.page(account).ids == [b]
    assert not has_notes.contains(account, a)
    assert has_notes.remove(account, b) is True
    assert has_notes.count(account) == 0
    assert has_notes.page(account) == Page([], None)
    # Re-adding after removal counts again.
    assert has_notes.add(account, a) is True
    assert has_notes.count(account) == 1


def test_page_order_limit_and_cursor(store: Store) -> None:
    has_notes = store.mapping("folder_has_notes")
    b = folder(4)
    items = notes(4, 7)
    sequences = [50, 10, 70, 30, 20, 60, 40]
    for note, sequence in zip(items, sequences, strict=False):
        has_notes.add(b, note, sequence=sequence)
    by_sequence = [note for _, note in sorted(zip(sequences, items, strict=False))]

    assert has_notes.page(b).ids == by_sequence[::-1]
    assert has_notes.page(b, oldest_first=True).ids == by_sequence

    first = has_notes.page(b, limit=3)
    assert first.ids == by_sequence[::-1][:3]
    assert first.cursor is not None
    second = has_notes.page(b, limit=3, cursor=first.cursor)
    assert second.ids == by_sequence[::-1][3:6]
    third = has_notes.page(b, limit=3, cursor=second.cursor)
    assert third == Page(by_sequence[::-1][6:], None)

    up = has_notes.page(b, limit=4, oldest_first=True)
    assert up.ids == by_sequence[:4]
    assert has_notes.page(b, limit=4, oldest_first=True, cursor=up.cursor) == Page(
        by_sequence[4:], None
    )


def test_rows_pages_carry_each_rows_sequence(store: Store) -> None:
    has_notes = store.mapping("folder_has_notes")
    b = folder(5)
    items = notes(5, 5)
    for note, sequence in zip(items, [30, 10, 50, 20, 40], strict=True):
        has_notes.add(b, note, sequence=sequence)
    rows, cursor = has_notes.rows_page(b, limit=3)
    rest, last = has_notes.rows_page(b, limit=3, cursor=cursor)
    assert [s for _, s in rows + rest] == [50, 40, 30, 20, 10] and last is None
    assert [note for note, _ in rows] == has_notes.page(b, limit=3).ids


def test_exact_fit_page_has_no_cursor(store: Store) -> None:
    has_notes = store.mapping("folder_has_notes")
    b = folder(0)
    for i, note in enumerate(notes(0, 4)):
        has_notes.add(b, note, sequence=i)
    assert has_notes.page(b, limit=4).cursor is None
    assert has_notes.page(b, limit=2).cursor is not None


def _walk(
    store: Store, from_id: int, limit: int, oldest_first: bool = False, between=None
) -> list[int]:  # type: ignore[no-untyped-def]
    mapping = store.mapping("folder_has_notes")
    seen: list[int] = []
    cursor = None
    for page_number in range(1000):
        page = mapping.page(from_id, limit=limit, cursor=cursor, oldest_first=oldest_first)
        assert len(page.ids) <= limit
        seen += page.ids
        if page.cursor is None:
            return seen
        cursor = page.cursor
        if between:
            between(page_number)
    raise AssertionError("paging did not end")


@pytest.mark.parametrize("oldest_first", [False, True])
def test_cursor_with_equal_sequences(store: Store, oldest_first: bool) -> None:
    """Many rows share a sequence: the cursor breaks ties by to_id, nothing is lost."""
    has_notes = store.mapping("folder_has_notes")
    b = folder(5)
    items = notes(5, 23)
    for i, note in enumerate(items):
        has_notes.add(b, note, sequence=i // 10)  # runs of 10 equal sequences
    seen = _walk(store, b, 4, oldest_first)
    assert sorted(seen) == sorted(items)
    assert len(seen) == len(set(seen))


@pytest.mark.parametrize("oldest_first", [False, True])
def test_cursor_stays_correct_while_rows_are_added(store: Store, oldest_first: bool) -> None:
    has_notes = store.mapping("folder_has_notes")
    b = folder(13)
    before = notes(13, 30)
    for note in before:
        has_notes.add(b, note)  # default sequence: now
    rng = random.Random(7)
    added = iter(notes(13, 100, start=1000))
    existing_sequences = [s for _, _, s in raw_rows(store, 13, "folder_has_notes")]

    def add_some(_page: int) -> None:
        # New rows: some newer than everything, some backdated in the middle.
        has_notes.add(b, next(added))
        has_notes.add(b, next(added), sequence=rng.choice(existing_sequences))
        has_notes.add(
            b, next(added), sequence=rng.randrange(min(existing_sequences), max(existing_sequences))
        )

    seen = _walk(store, b, 7, oldest_first, between=add_some)
    assert len(seen) == len(set(seen)), "a row came back twice"
    assert set(before) <= set(seen), "a row that existed before paging began was missed"


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "garbage!",
        "@@@@",
        "\u00e9t\u00e9",
        "x" * 65,
        encode(1, 2)[:-1] + "*",
        "MTIz",  # base64 of "123": no separator
        "YTpi",  # "a:b"
        "MToyOjM",  # "1:2:3"
        encode(1, -5),
        encode(1, 2**62),
        encode(2**63, 1),
        12,
    ],
)
def test_invalid_cursor(store: Store, cursor: object) -> None:
    b = folder(2)
    store.mapping("folder_has_notes").add(b, notes(2, 1)[0])
    with pytest.raises(InvalidCursor):
        store.mapping("folder_has_notes").page(b, cursor=cursor)  # type: ignore[arg-type]
    assert issubclass(InvalidCursor, ValueError)


@given(st.integers(-(2**63), 2**63 - 1), st.integers(0, 2**62 - 1))
def test_cursor_round_trip(sequence: int, to_id: int) -> None:
    cursor = encode(sequence, to_id)
    assert decode(cursor) == (sequence, to_id)
    assert cursor.isascii() and "=" not in cursor and len(cursor) <= 64


@pytest.mark.parametrize("limit", [0, -1, 1001, True, 2.5, None])
def test_invalid_limit(store: Store, limit: object) -> None:
    with pytest.raises(ValueError, match="limit"):
        store.mapping("folder_has_notes").page(folder(1), limit=limit)  # type: ignore[arg-type]


def test_count_is_materialized(store: Store) -> None:
    has_notes = store.mapping("folder_has_notes")
    b = folder(6)
    items = notes(6, 120)
    for note in items:
        has_notes.add(b, note)
    for note in items[:20]:
        has_notes.remove(b, note)
    has_notes.add(b, items[30])  # a repeat does not count
    has_notes.remove(b, items[0])  # nor does removing a missing row
    with store.count_queries() as queries:
        assert has_notes.count(b) == 100
    assert queries.count == 1
    assert "mapping_counts" in queries.statements[0]
    assert "COUNT(" not in queries.statements[0].upper()
    assert has_notes.count(folder(6, 2)) == 0


def test_count_many(store: Store) -> None:
    has_notes = store.mapping("folder_has_notes")
    folders = [folder(1, 1), folder(1, 2), folder(9, 1), folder(9, 2)]
    for n, b in enumerate(folders):
        for note in notes(1, n + 1):
            has_notes.add(b, note)
    with store.count_queries() as queries:
        counts = has_notes.count_many([*folders, folder(1, 50)])
    assert queries.count == 2  # shards 1 and 9
    assert counts == {folders[0]: 1, folders[1]: 2, folders[2]: 3, folders[3]: 4, folder(1, 50): 0}
    assert has_notes.count_many([]) == {}


def test_contains(store: Store) -> None:
    has_notes = store.mapping("folder_has_notes")
    b = folder(10)
    a, c = notes(3, 2)
    has_notes.add(b, a)
    assert has_notes.contains(b, a)
    assert not has_notes.contains(b, c)
    assert not has_notes.contains(folder(10, 2), a)


def test_filter_returns_the_mapped_subset_in_one_query(store: Store) -> None:
    has_notes = store.mapping("folder_has_notes")
    b = folder(12)
    candidates = notes(12, 10) + notes(3, 5)
    mapped = set(candidates[1::3])
    for note in mapped:
        has_notes.add(b, note)
    has_notes.add(folder(12, 2), candidates[0])  # another folder's note
    with store.count_queries() as queries:
        result = has_notes.filter(b, list(reversed(candidates)))
    assert queries.count == 1
    assert result == [note for note in reversed(candidates) if note in mapped]
    assert has_notes.filter(b, []) == []
    assert has_notes.filter(b, [candidates[1], candidates[1]]) == [candidates[1]]


def test_page_many_one_query_per_shard(store: Store) -> None:
    has_notes = store.mapping("folder_has_notes")
    rng = random.Random(3)
    folders = [folder(7, local) for local in range(1, 21)]
    for n, b in enumerate(folders):
        for note in notes(7, n % 7, start=100 * n + 1):  # 0..6 notes each, folder 0 has none
            has_notes.add(b, note, sequence=rng.randrange(1000))
    # (read through the plain store, so a cached store's lists are still cold below)
    expected = {b: plain(store).mapping("folder_has_notes").page(b, limit=4) for b in folders}
    with store.count_queries() as queries:
        pages = has_notes.page_many(folders, limit=4)
    assert queries.count == 1
    assert pages == expected
    assert list(pages) == folders
    # The cursors page_many hands out continue where page() would.
    for b in folders:
        if pages[b].cursor:
            assert has_notes.page(b, limit=4, cursor=pages[b].cursor) == has_notes.page(
                b, limit=4, cursor=expected[b].cursor
            )


def test_page_many_across_shards(store: Store) -> None:
    has_notes = store.mapping("folder_has_notes")
    folders = [folder(shard, local) for shard in (0, 8, 15) for local in (1, 2)]
    for i, b in enumerate(folders):
        for j, note in enumerate(notes(3, 3, start=10 * i + 1)):
            has_notes.add(b, note, sequence=j)
    with store.count_queries() as queries:
        pages = has_notes.page_many(folders, limit=50)
    # A statement per shard, a host's sent together where the driver can (MySQL).
    hosts = {store.topology.master_of(shard) for shard in (0, 8, 15)}
    assert queries.count == (len(hosts) if plain(store).dialect(0).several_statements else 3)
    assert pages == {b: has_notes.page(b, limit=50) for b in folders}
    assert has_notes.page_many([]) == {}


def test_page_many_many_lists_on_one_shard(store: Store) -> None:
    """A feed pages hundreds of followed folders on one shard at once."""
    has_notes = store.mapping("folder_has_notes")
    folders = [folder(11, local) for local in range(1, 601)]
    for b in folders[::50]:
        has_notes.add(b, notes(11, 1, start=b % 1000 + 1)[0])
    pages = has_notes.page_many(folders, limit=10)
    assert pages == {b: has_notes.page(b, limit=10) for b in folders}


def test_inverse_is_written_on_the_to_shard(store: Store) -> None:
    """folder_has_notes writes note_in_folder on the note's shard (another host here)."""
    has_notes = store.mapping("folder_has_notes")
    owned_by = store.mapping("note_in_folder")
    b = store.objects("folder").create(2, {"name": "on host A"})
    note = store.objects("note").create(12, {"title": "on host B"})
    assert store.topology.master_of(2) != store.topology.master_of(12)

    assert has_notes.add(b, note, sequence=5) is True
    assert raw_rows(store, 2, "folder_has_notes") == [(b, note, 5)]
    assert raw_rows(store, 12, "note_in_folder") == [(note, b, 5)]
    assert raw_rows(store, 12, "folder_has_notes") == []
    assert raw_rows(store, 2, "note_in_folder") == []
    assert owned_by.page(note).ids == [b]
    assert owned_by.count(note) == 1
    assert owned_by.contains(note, b)

    assert has_notes.remove(b, note) is True
    assert raw_rows(store, 2, "folder_has_notes") == []
    assert raw_rows(store, 12, "note_in_folder") == []
    assert owned_by.count(note) == 0
    assert has_notes.count(b) == 0


def test_inverse_on_the_same_shard(store: Store) -> None:
    likes = store.mapping("account_stars_notes")
    account, note = compose(4, ACCOUNT, 1), compose(4, NOTE, 1)
    likes.add(account, note)
    assert store.mapping("note_starred_by_accounts").page(note).ids == [account]
    assert store.mapping("note_starred_by_accounts").count(note) == 1


def test_self_relation_with_inverse(store: Store) -> None:
    follows = store.mapping("account_watches_accounts")
    ada, bob = compose(1, ACCOUNT, 1), compose(14, ACCOUNT, 1)
    follows.add(ada, bob)
    follows.add(bob, ada)
    assert follows.page(ada).ids == [bob]
    assert store.mapping("account_watched_by_accounts").page(bob).ids == [ada]
    assert store.mapping("account_watched_by_accounts").page(ada).ids == [bob]
    assert follows.count(ada) == 1
    assert store.mapping("account_watched_by_accounts").count(ada) == 1


def test_writing_an_inverse_table_directly_is_refused(store: Store) -> None:
    owned_by = store.mapping("note_in_folder")
    note, b = compose(3, NOTE, 1), folder(3)
    with pytest.raises(ValueError, match="folder_has_notes"):
        owned_by.add(note, b)
    with pytest.raises(ValueError):
        owned_by.remove(note, b)
    assert raw_rows(store, 3, "note_in_folder") == []
    assert raw_rows(store, 3, "folder_has_notes") == []
    assert owned_by.count(note) == 0


def test_unknown_relation(store: Store) -> None:
    from shardstore import UnknownRelation

    with pytest.raises(UnknownRelation):
        store.mapping("folder_has_accounts")


def test_edges_exist_one_query_per_shard(store: Store) -> None:
    viewer, other = compose(5, ACCOUNT, 1), compose(12, ACCOUNT, 1)
    note, b = compose(5, NOTE, 1), folder(5)
    store.mapping("account_stars_notes").add(viewer, note)
    store.mapping("account_watches_folders").add(viewer, b)
    store.mapping("account_watches_accounts").add(other, viewer)
    asked = [
        ("account_stars_notes", viewer, note),
        ("account_watches_folders", viewer, b),
        ("account_watches_accounts", viewer, other),
        ("account_watches_accounts", other, viewer),
        ("account_stars_notes", other, note),
    ]
    with store.count_queries() as queries:
        found = store.edges_exist(asked)
    assert queries.count == 2  # shards 5 and 12
    assert found == {asked[0], asked[1], asked[3]}
    assert store.edges_exist([]) == set()


def test_edges_exist_many_checks_on_one_shard(store: Store) -> None:
    viewer = compose(5, ACCOUNT, 1)
    candidates = [compose(5, NOTE, local) for local in range(1, 601)]
    for note in candidates[::100]:
        store.mapping("account_stars_notes").add(viewer, note)
    found = store.edges_exist(("account_stars_notes", viewer, note) for note in candidates)
    assert found == {("account_stars_notes", viewer, note) for note in candidates[::100]}
