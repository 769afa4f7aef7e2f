"""Reconcile: a crash between a mapping's forward write and its inverse never leaves a
permanent half-edge. The forward table is the truth."""

from __future__ import annotations

import io

import pytest

from shardstore import Store
from shardstore.cli import main as cli
from shardstore.mappings import _delete, _insert
from shardstore.reconcile import reconcile

from .conftest import plain


def board_and_pins(store: Store, n: int) -> tuple[int, list[int]]:
    """A board on shard 2 (host A) and pins on shard 9 (host B): the inverse is elsewhere."""
    board = store.objects("board").create(2, {"name": "b"})
    return board, [store.objects("pin").create(9, {"i": i}) for i in range(n)]


def half_add(store: Store, board: int, pin: int) -> None:
    """What a crash after the forward write of ``add`` leaves: no inverse row."""
    with plain(store).session(2, write=True) as session:
        _insert(session, "board_has_pins", board, pin, 1)


def half_remove(store: Store, board: int, pin: int) -> None:
    """What a crash after the forward delete of ``remove`` leaves: an orphan inverse."""
    with plain(store).session(2, write=True) as session:
        _delete(session, "board_has_pins", board, pin)


def test_reconcile_completes_adds_and_removes_orphans(store: Store) -> None:
    board, pins = board_and_pins(store, 4)
    forward, inverse = store.mapping("board_has_pins"), store.mapping("pin_owned_by_board")
    forward.add(board, pins[0])
    forward.add(board, pins[1])
    half_add(store, board, pins[2])
    half_remove(store, board, pins[1])
    assert inverse.contains(pins[1], board) and not inverse.contains(pins[2], board)

    checked = reconcile(store, "board_has_pins", repair=False)
    assert (checked.missing_inverse, checked.orphan_inverse) == (1, 1)
    assert not inverse.contains(pins[2], board)  # a check changes nothing

    report = reconcile(store, "board_has_pins")
    assert (report.missing_inverse, report.orphan_inverse) == (1, 1)
    assert inverse.contains(pins[2], board) and not inverse.contains(pins[1], board)
    assert inverse.count(pins[2]) == 1 and inverse.count(pins[1]) == 0
    assert set(forward.page(board).ids) == {pins[0], pins[2]}  # the forward table is the truth
    again = reconcile(store, "board_has_pins")
    assert (again.missing_inverse, again.orphan_inverse) == (0, 0)


def test_reconcile_of_a_clean_relation_finds_nothing(store: Store) -> None:
    board, pins = board_and_pins(store, 3)
    for pin in pins:
        store.mapping("board_has_pins").add(board, pin)
    report = reconcile(store, "board_has_pins")
    assert report.checked == 6 and (report.missing_inverse, report.orphan_inverse) == (0, 0)


def test_the_cli_reports_what_it_repaired(store: Store) -> None:
    board, pins = board_and_pins(store, 1)
    half_add(store, board, pins[0])
    out = io.StringIO()
    status = cli(
        ["reconcile", "board_has_pins"], store_factory=lambda: store, out=out, err=io.StringIO()
    )
    assert status == 0
    # the forward row, then the inverse row it just wrote
    assert "board_has_pins: 2 rows checked, repaired 1 missing inverse" in out.getvalue()
    assert store.mapping("pin_owned_by_board").contains(pins[0], board)


def test_a_relation_without_inverse_cannot_be_reconciled(store: Store) -> None:
    with pytest.raises(ValueError, match="no inverse"):
        reconcile(store, "user_has_boards")


def test_repairs_leave_no_stale_cache(store: Store) -> None:
    """Lists, counts and edges read (and so cached) before a crash answer what the
    database says once reconcile has repaired the pair."""
    board, pins = board_and_pins(store, 2)
    forward, inverse = store.mapping("board_has_pins"), store.mapping("pin_owned_by_board")
    forward.add(board, pins[1])
    # Warm every read of both ends (a cached store now holds them).
    assert forward.page(board).ids == [pins[1]] and forward.count(board) == 1
    assert inverse.page(pins[0]).ids == [] and inverse.page(pins[1]).ids == [board]
    assert not forward.contains(board, pins[0]) and inverse.count(pins[1]) == 1

    half_add(store, board, pins[0])  # a crashed add: forward row, no inverse, no invalidation
    half_remove(store, board, pins[1])  # a crashed remove: orphan inverse, no invalidation
    report = reconcile(store, "board_has_pins")

    assert (report.missing_inverse, report.orphan_inverse) == (1, 1)
    assert forward.page(board).ids == [pins[0]] and forward.count(board) == 1
    assert forward.contains(board, pins[0]) and not forward.contains(board, pins[1])
    assert inverse.page(pins[0]).ids == [board] and inverse.count(pins[0]) == 1
    assert inverse.page(pins[1]).ids == [] and inverse.count(pins[1]) == 0


def test_repair_inverse_follows_the_forward_row(store: Store) -> None:
    board, pins = board_and_pins(store, 1)
    forward, inverse = store.mapping("board_has_pins"), store.mapping("pin_owned_by_board")
    half_add(store, board, pins[0])
    assert forward.repair_inverse(board, pins[0]) is True
    assert inverse.page(pins[0]).ids == [board]
    assert forward.repair_inverse(board, pins[0]) is False  # already agrees
    half_remove(store, board, pins[0])
    assert forward.repair_inverse(board, pins[0]) is True
    assert inverse.count(pins[0]) == 0 and not inverse.contains(pins[0], board)
    with pytest.raises(ValueError, match="written through"):
        inverse.repair_inverse(pins[0], board)


def test_present_reads_pairs_in_bulk(store: Store) -> None:
    board, pins = board_and_pins(store, 3)
    forward = store.mapping("board_has_pins")
    forward.add(board, pins[0])
    forward.add(board, pins[2])
    asked = [(board, pin) for pin in pins] + [(board, pins[0])]
    with store.count_queries() as queries:
        found = forward.present(asked)
    assert found == {(board, pins[0]), (board, pins[2])}
    assert queries.count == 1  # one shard: one query, whatever a cache holds
    assert forward.present([]) == set()
