"""Mapping tables: add/remove, ordered pages with cursors, counts, contains, filter, inverses."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardstore import InvalidCursor, Page, Store, compose
from shardstore.cursors import decode, encode

from .conftest import plain

PIN, BOARD, USER = 1, 2, 3


def pins(shard: int, n: int, start: int = 1) -> list[int]:
    """Pin IDs on ``shard`` (mappings do not need the objects to exist)."""
    return [compose(shard, PIN, local) for local in range(start, start + n)]


def board(shard: int, local: int = 1) -> int:
    return compose(shard, BOARD, local)


def raw_rows(store: Store, shard: int, table: str) -> list[tuple[int, int, int]]:
    with plain(store).session(shard) as session:
        rows = session.query(f"SELECT from_id, to_id, sequence FROM {{db}}.{table} ORDER BY 1, 2")
    return [(int(f), int(t), int(s)) for f, t, s in rows]


def test_add_twice_keeps_one_row(store: Store) -> None:
    has_pins = store.mapping("user_has_pins")
    user, pin = compose(3, USER, 1), compose(3, PIN, 1)
    assert has_pins.add(user, pin, sequence=10) is True
    assert has_pins.add(user, pin, sequence=20) is False
    assert has_pins.count(user) == 1
    assert raw_rows(store, 3, "user_has_pins") == [(user, pin, 10)]
    assert has_pins.page(user) == Page([pin], None)


def test_remove(store: Store) -> None:
    has_pins = store.mapping("user_has_pins")
    user = compose(9, USER, 1)
    a, b = pins(9, 2)
    has_pins.add(user, a)
    has_pins.add(user, b)
    assert has_pins.remove(user, a) is True
    assert has_pins.remove(user, a) is False
    assert has_pins.count(user) == 1
    assert has_pins.page(user).ids == [b]
    assert not has_pins.contains(user, a)
    assert has_pins.remove(user, b) is True
    assert has_pins.count(user) == 0
    assert has_pins.page(user) == Page([], None)
    # Re-adding after removal counts again.
    assert has_pins.add(user, a) is True
    assert has_pins.count(user) == 1


def test_page_order_limit_and_cursor(store: Store) -> None:
    has_pins = store.mapping("board_has_pins")
    b = board(4)
    items = pins(4, 7)
    sequences = [50, 10, 70, 30, 20, 60, 40]
    for pin, sequence in zip(items, sequences, strict=False):
        has_pins.add(b, pin, sequence=sequence)
    by_sequence = [pin for _, pin in sorted(zip(sequences, items, strict=False))]

    assert has_pins.page(b).ids == by_sequence[::-1]
    assert has_pins.page(b, oldest_first=True).ids == by_sequence

    first = has_pins.page(b, limit=3)
    assert first.ids == by_sequence[::-1][:3]
    assert first.cursor is not None
    second = has_pins.page(b, limit=3, cursor=first.cursor)
    assert second.ids == by_sequence[::-1][3:6]
    third = has_pins.page(b, limit=3, cursor=second.cursor)
    assert third == Page(by_sequence[::-1][6:], None)

    up = has_pins.page(b, limit=4, oldest_first=True)
    assert up.ids == by_sequence[:4]
    assert has_pins.page(b, limit=4, oldest_first=True, cursor=up.cursor) == Page(
        by_sequence[4:], None
    )


def test_rows_pages_carry_each_rows_sequence(store: Store) -> None:
    has_pins = store.mapping("board_has_pins")
    b = board(5)
    items = pins(5, 5)
    for pin, sequence in zip(items, [30, 10, 50, 20, 40], strict=True):
        has_pins.add(b, pin, sequence=sequence)
    rows, cursor = has_pins.rows_page(b, limit=3)
    rest, last = has_pins.rows_page(b, limit=3, cursor=cursor)
    assert [s for _, s in rows + rest] == [50, 40, 30, 20, 10] and last is None
    assert [pin for pin, _ in rows] == has_pins.page(b, limit=3).ids


def test_exact_fit_page_has_no_cursor(store: Store) -> None:
    has_pins = store.mapping("board_has_pins")
    b = board(0)
    for i, pin in enumerate(pins(0, 4)):
        has_pins.add(b, pin, sequence=i)
    assert has_pins.page(b, limit=4).cursor is None
    assert has_pins.page(b, limit=2).cursor is not None


def _walk(
    store: Store, from_id: int, limit: int, oldest_first: bool = False, between=None
) -> list[int]:  # type: ignore[no-untyped-def]
    mapping = store.mapping("board_has_pins")
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
    has_pins = store.mapping("board_has_pins")
    b = board(5)
    items = pins(5, 23)
    for i, pin in enumerate(items):
        has_pins.add(b, pin, sequence=i // 10)  # runs of 10 equal sequences
    seen = _walk(store, b, 4, oldest_first)
    assert sorted(seen) == sorted(items)
    assert len(seen) == len(set(seen))


@pytest.mark.parametrize("oldest_first", [False, True])
def test_cursor_stays_correct_while_rows_are_added(store: Store, oldest_first: bool) -> None:
    has_pins = store.mapping("board_has_pins")
    b = board(13)
    before = pins(13, 30)
    for pin in before:
        has_pins.add(b, pin)  # default sequence: now
    rng = random.Random(7)
    added = iter(pins(13, 100, start=1000))
    existing_sequences = [s for _, _, s in raw_rows(store, 13, "board_has_pins")]

    def add_some(_page: int) -> None:
        # New rows: some newer than everything, some backdated in the middle.
        has_pins.add(b, next(added))
        has_pins.add(b, next(added), sequence=rng.choice(existing_sequences))
        has_pins.add(
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
    b = board(2)
    store.mapping("board_has_pins").add(b, pins(2, 1)[0])
    with pytest.raises(InvalidCursor):
        store.mapping("board_has_pins").page(b, cursor=cursor)  # type: ignore[arg-type]
    assert issubclass(InvalidCursor, ValueError)


@given(st.integers(-(2**63), 2**63 - 1), st.integers(0, 2**62 - 1))
def test_cursor_round_trip(sequence: int, to_id: int) -> None:
    cursor = encode(sequence, to_id)
    assert decode(cursor) == (sequence, to_id)
    assert cursor.isascii() and "=" not in cursor and len(cursor) <= 64


@pytest.mark.parametrize("limit", [0, -1, 1001, True, 2.5, None])
def test_invalid_limit(store: Store, limit: object) -> None:
    with pytest.raises(ValueError, match="limit"):
        store.mapping("board_has_pins").page(board(1), limit=limit)  # type: ignore[arg-type]


def test_count_is_materialized(store: Store) -> None:
    has_pins = store.mapping("board_has_pins")
    b = board(6)
    items = pins(6, 120)
    for pin in items:
        has_pins.add(b, pin)
    for pin in items[:20]:
        has_pins.remove(b, pin)
    has_pins.add(b, items[30])  # a repeat does not count
    has_pins.remove(b, items[0])  # nor does removing a missing row
    with store.count_queries() as queries:
        assert has_pins.count(b) == 100
    assert queries.count == 1
    assert "mapping_counts" in queries.statements[0]
    assert "COUNT(" not in queries.statements[0].upper()
    assert has_pins.count(board(6, 2)) == 0


def test_count_many(store: Store) -> None:
    has_pins = store.mapping("board_has_pins")
    boards = [board(1, 1), board(1, 2), board(9, 1), board(9, 2)]
    for n, b in enumerate(boards):
        for pin in pins(1, n + 1):
            has_pins.add(b, pin)
    with store.count_queries() as queries:
        counts = has_pins.count_many([*boards, board(1, 50)])
    assert queries.count == 2  # shards 1 and 9
    assert counts == {boards[0]: 1, boards[1]: 2, boards[2]: 3, boards[3]: 4, board(1, 50): 0}
    assert has_pins.count_many([]) == {}


def test_contains(store: Store) -> None:
    has_pins = store.mapping("board_has_pins")
    b = board(10)
    a, c = pins(3, 2)
    has_pins.add(b, a)
    assert has_pins.contains(b, a)
    assert not has_pins.contains(b, c)
    assert not has_pins.contains(board(10, 2), a)


def test_filter_returns_the_mapped_subset_in_one_query(store: Store) -> None:
    has_pins = store.mapping("board_has_pins")
    b = board(12)
    candidates = pins(12, 10) + pins(3, 5)
    mapped = set(candidates[1::3])
    for pin in mapped:
        has_pins.add(b, pin)
    has_pins.add(board(12, 2), candidates[0])  # another board's pin
    with store.count_queries() as queries:
        result = has_pins.filter(b, list(reversed(candidates)))
    assert queries.count == 1
    assert result == [pin for pin in reversed(candidates) if pin in mapped]
    assert has_pins.filter(b, []) == []
    assert has_pins.filter(b, [candidates[1], candidates[1]]) == [candidates[1]]


def test_page_many_one_query_per_shard(store: Store) -> None:
    has_pins = store.mapping("board_has_pins")
    rng = random.Random(3)
    boards = [board(7, local) for local in range(1, 21)]
    for n, b in enumerate(boards):
        for pin in pins(7, n % 7, start=100 * n + 1):  # 0..6 pins each, board 0 has none
            has_pins.add(b, pin, sequence=rng.randrange(1000))
    # (read through the plain store, so a cached store's lists are still cold below)
    expected = {b: plain(store).mapping("board_has_pins").page(b, limit=4) for b in boards}
    with store.count_queries() as queries:
        pages = has_pins.page_many(boards, limit=4)
    assert queries.count == 1
    assert pages == expected
    assert list(pages) == boards
    # The cursors page_many hands out continue where page() would.
    for b in boards:
        if pages[b].cursor:
            assert has_pins.page(b, limit=4, cursor=pages[b].cursor) == has_pins.page(
                b, limit=4, cursor=expected[b].cursor
            )


def test_page_many_across_shards(store: Store) -> None:
    has_pins = store.mapping("board_has_pins")
    boards = [board(shard, local) for shard in (0, 8, 15) for local in (1, 2)]
    for i, b in enumerate(boards):
        for j, pin in enumerate(pins(3, 3, start=10 * i + 1)):
            has_pins.add(b, pin, sequence=j)
    with store.count_queries() as queries:
        pages = has_pins.page_many(boards, limit=50)
    assert queries.count == 3
    assert pages == {b: has_pins.page(b, limit=50) for b in boards}
    assert has_pins.page_many([]) == {}


def test_page_many_many_lists_on_one_shard(store: Store) -> None:
    """A feed pages hundreds of followed boards on one shard at once."""
    has_pins = store.mapping("board_has_pins")
    boards = [board(11, local) for local in range(1, 601)]
    for b in boards[::50]:
        has_pins.add(b, pins(11, 1, start=b % 1000 + 1)[0])
    pages = has_pins.page_many(boards, limit=10)
    assert pages == {b: has_pins.page(b, limit=10) for b in boards}


def test_inverse_is_written_on_the_to_shard(store: Store) -> None:
    """board_has_pins writes pin_owned_by_board on the pin's shard (another host here)."""
    has_pins = store.mapping("board_has_pins")
    owned_by = store.mapping("pin_owned_by_board")
    b = store.objects("board").create(2, {"name": "on host A"})
    pin = store.objects("pin").create(12, {"title": "on host B"})
    assert store.topology.master_of(2) != store.topology.master_of(12)

    assert has_pins.add(b, pin, sequence=5) is True
    assert raw_rows(store, 2, "board_has_pins") == [(b, pin, 5)]
    assert raw_rows(store, 12, "pin_owned_by_board") == [(pin, b, 5)]
    assert raw_rows(store, 12, "board_has_pins") == []
    assert raw_rows(store, 2, "pin_owned_by_board") == []
    assert owned_by.page(pin).ids == [b]
    assert owned_by.count(pin) == 1
    assert owned_by.contains(pin, b)

    assert has_pins.remove(b, pin) is True
    assert raw_rows(store, 2, "board_has_pins") == []
    assert raw_rows(store, 12, "pin_owned_by_board") == []
    assert owned_by.count(pin) == 0
    assert has_pins.count(b) == 0


def test_inverse_on_the_same_shard(store: Store) -> None:
    likes = store.mapping("user_likes_pins")
    user, pin = compose(4, USER, 1), compose(4, PIN, 1)
    likes.add(user, pin)
    assert store.mapping("pin_liked_by_users").page(pin).ids == [user]
    assert store.mapping("pin_liked_by_users").count(pin) == 1


def test_self_relation_with_inverse(store: Store) -> None:
    follows = store.mapping("user_follows_users")
    ada, bob = compose(1, USER, 1), compose(14, USER, 1)
    follows.add(ada, bob)
    follows.add(bob, ada)
    assert follows.page(ada).ids == [bob]
    assert store.mapping("user_followed_by_users").page(bob).ids == [ada]
    assert store.mapping("user_followed_by_users").page(ada).ids == [bob]
    assert follows.count(ada) == 1
    assert store.mapping("user_followed_by_users").count(ada) == 1


def test_writing_an_inverse_table_directly_is_refused(store: Store) -> None:
    owned_by = store.mapping("pin_owned_by_board")
    pin, b = compose(3, PIN, 1), board(3)
    with pytest.raises(ValueError, match="board_has_pins"):
        owned_by.add(pin, b)
    with pytest.raises(ValueError):
        owned_by.remove(pin, b)
    assert raw_rows(store, 3, "pin_owned_by_board") == []
    assert raw_rows(store, 3, "board_has_pins") == []
    assert owned_by.count(pin) == 0


def test_unknown_relation(store: Store) -> None:
    from shardstore import UnknownRelation

    with pytest.raises(UnknownRelation):
        store.mapping("board_has_users")


def test_edges_exist_one_query_per_shard(store: Store) -> None:
    viewer, other = compose(5, USER, 1), compose(12, USER, 1)
    pin, b = compose(5, PIN, 1), board(5)
    store.mapping("user_likes_pins").add(viewer, pin)
    store.mapping("user_follows_boards").add(viewer, b)
    store.mapping("user_follows_users").add(other, viewer)
    asked = [
        ("user_likes_pins", viewer, pin),
        ("user_follows_boards", viewer, b),
        ("user_follows_users", viewer, other),
        ("user_follows_users", other, viewer),
        ("user_likes_pins", other, pin),
    ]
    with store.count_queries() as queries:
        found = store.edges_exist(asked)
    assert queries.count == 2  # shards 5 and 12
    assert found == {asked[0], asked[1], asked[3]}
    assert store.edges_exist([]) == set()


def test_edges_exist_many_checks_on_one_shard(store: Store) -> None:
    viewer = compose(5, USER, 1)
    candidates = [compose(5, PIN, local) for local in range(1, 601)]
    for pin in candidates[::100]:
        store.mapping("user_likes_pins").add(viewer, pin)
    found = store.edges_exist(("user_likes_pins", viewer, pin) for pin in candidates)
    assert found == {("user_likes_pins", viewer, pin) for pin in candidates[::100]}
