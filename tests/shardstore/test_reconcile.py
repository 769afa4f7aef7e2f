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


def folder_and_notes(store: Store, n: int) -> tuple[int, list[int]]:
    """A folder on shard 2 (host A) and notes on shard 9 (host B): the inverse is elsewhere."""
    folder = store.objects("folder").create(2, {"name": "b"})
    return folder, [store.objects("note").create(9, {"i": i}) for i in range(n)]


def half_add(store: Store, folder: int, note: int) -> None:
    """What a crash after the forward write of ``add`` leaves: no inverse row."""
    with plain(store).session(2, write=True) as session:
        _insert(session, "folder_has_notes", folder, note, 1)


def half_remove(store: Store, folder: int, note: int) -> None:
    """What a crash after the forward delete of ``remove`` leaves: an orphan inverse."""
    with plain(store).session(2, write=True) as session:
        _delete(session, "folder_has_notes", folder, note)


def test_reconcile_completes_adds_and_removes_orphans(store: Store) -> None:
    folder, notes = folder_and_notes(store, 4)
    forward, inverse = store.mapping("folder_has_notes"), store.mapping("note_in_folder")
    forward.add(folder, notes[0])
    forward.add(folder, notes[1])
    half_add(store, folder, notes[2])
    half_remove(store, folder, notes[1])
    assert inverse.contains(notes[1], folder) and not inverse.contains(notes[2], folder)

    checked = reconcile(store, "folder_has_notes", repair=False)
    assert (checked.missing_inverse, checked.orphan_inverse) == (1, 1)
    assert not inverse.contains(notes[2], folder)  # a check changes nothing

    report = reconcile(store, "folder_has_notes")
    assert (report.missing_inverse, report.orphan_inverse) == (1, 1)
    assert inverse.contains(notes[2], folder) and not inverse.contains(notes[1], folder)
    assert inverse.count(notes[2]) == 1 and inverse.count(notes[1]) == 0
    assert set(forward.page(folder).ids) == {notes[0], notes[2]}  # the forward table is the truth
    again = reconcile(store, "folder_has_notes")
    assert (again.missing_inverse, again.orphan_inverse) == (0, 0)


def test_reconcile_of_a_clean_relation_finds_nothing(store: Store) -> None:
    folder, notes = folder_and_notes(store, 3)
    for note in notes:
        store.mapping("folder_has_notes").add(folder, note)
    report = reconcile(store, "folder_has_notes")
    assert report.checked == 6 and (report.missing_inverse, report.orphan_inverse) == (0, 0)


def test_the_cli_reports_what_it_repaired(store: Store) -> None:
    folder, notes = folder_and_notes(store, 1)
    half_add(store, folder, notes[0])
    out = io.StringIO()
    status = cli(
        ["reconcile", "folder_has_notes"], store_factory=lambda: store, out=out, err=io.StringIO()
    )
    assert status == 0
    # the forward row, then the inverse row it just wrote
    assert "folder_has_notes: 2 rows checked, repaired 1 missing inverse" in out.getvalue()
    assert store.mapping("note_in_folder").contains(notes[0], folder)


def test_a_relation_without_inverse_cannot_be_reconciled(store: Store) -> None:
    with pytest.raises(ValueError, match="no inverse"):
        reconcile(store, "account_has_folders")


def test_repairs_leave_no_stale_cache(store: Store) -> None:
    """Lists, counts and edges read (and so cached) before a crash answer what the
    database says once reconcile has repaired the pair."""
    folder, notes = folder_and_notes(store, 2)
    forward, inverse = store.mapping("folder_has_notes"), store.mapping("note_in_folder")
    forward.add(folder, notes[1])
    # Warm every read of both ends (a cached store now holds them).
    assert forward.page(folder).ids == [notes[1]] and forward.count(folder) == 1
    assert inverse.page(notes[0]).ids == [] and inverse.page(notes[1]).ids == [folder]
    assert not forward.contains(folder, notes[0]) and inverse.count(notes[1]) == 1

    half_add(store, folder, notes[0])  # a crashed add: forward row, no inverse, no invalidation
    half_remove(store, folder, notes[1])  # a crashed remove: orphan inverse, no invalidation
    report = reconcile(store, "folder_has_notes")

    assert (report.missing_inverse, report.orphan_inverse) == (1, 1)
    assert forward.page(folder).ids == [notes[0]] and forward.count(folder) == 1
    assert forward.contains(folder, notes[0]) and not forward.contains(folder, notes[1])
    assert inverse.page(notes[0]).ids == [folder] and inverse.count(notes[0]) == 1
    assert inverse.page(notes[1]).ids == [] and inverse.count(notes[1]) == 0


def test_repair_inverse_follows_the_forward_row(store: Store) -> None:
    folder, notes = folder_and_notes(store, 1)
    forward, inverse = store.mapping("folder_has_notes"), store.mapping("note_in_folder")
    half_add(store, folder, notes[0])
    assert forward.repair_inverse(folder, notes[0]) is True
    assert inverse.page(notes[0]).ids == [folder]
    assert forward.repair_inverse(folder, notes[0]) is False  # already agrees
    half_remove(store, folder, notes[0])
    assert forward.repair_inverse(folder, notes[0]) is True
    assert inverse.count(notes[0]) == 0 and not inverse.contains(notes[0], folder)
    with pytest.raises(ValueError, match="written through"):
        inverse.repair_inverse(notes[0], folder)


def test_present_reads_pairs_in_bulk(store: Store) -> None:
    folder, notes = folder_and_notes(store, 3)
    forward = store.mapping("folder_has_notes")
    forward.add(folder, notes[0])
    forward.add(folder, notes[2])
    asked = [(folder, note) for note in notes] + [(folder, notes[0])]
    with store.count_queries() as queries:
        found = forward.present(asked)
    assert found == {(folder, notes[0]), (folder, notes[2])}
    assert queries.count == 1  # one shard: one query, whatever a cache holds
    assert forward.present([]) == set()
