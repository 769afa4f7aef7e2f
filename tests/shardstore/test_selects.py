"""Reads planned as SELECTs and run together: each plan answers as it would alone, every
statement for one MySQL host goes in one round trip, and a host's SELECTs of objects, of
any tables, are one statement."""

from __future__ import annotations

import pytest

from shardstore import Store, compose
from shardstore.selects import Select, Selects, fewest_statements, run_together
from tests.shardstore.cache.helpers import FOLDER, NOTE


def test_plans_run_together_answer_as_alone_in_one_round_trip_per_host(
    plain_store: Store,
) -> None:
    store = plain_store
    notes = store.objects("note")
    a, b = notes.create(1, {"title": "a"}), notes.create(2, {"title": "b"})  # host A
    c = notes.create(9, {"title": "c"})  # host B
    owner = store.objects("account").create(1, {"login": "ada"})
    store.lookup("login").insert("ada", owner)
    folder = compose(2, FOLDER, 1)
    store.mapping("folder_has_notes").add(folder, b, sequence=1)
    empty_folder = compose(9, FOLDER, 2)

    def plans() -> list[Selects[object]]:
        return [
            notes.selecting_stored([a, b, c, compose(9, NOTE, 999)], counts=True),
            store.mapping("folder_has_notes").selecting_rows([folder, empty_folder], limit=5),
            store.lookup("login").selecting("ada"),
            store.lookup("login").selecting("nobody"),
            Selects.computed(lambda: "read by other means"),
        ]

    alone = [plan.run() for plan in plans()]
    assert sorted(alone[0]) == sorted([a, b, c])  # the missing note is left out
    assert alone[1:] == [{folder: [(b, 1)], empty_folder: []}, owner, None, "read by other means"]
    with store.count_queries() as together:
        assert run_together(plans()) == alone
    # MySQL: one round trip per host, whatever its statements. SQLite (a file per shard,
    # one statement at a time): a note from each of 3 shards, 2 lists, 2 lookups.
    lookup_shards = {store.lookup("login").shard_of(key) for key in ("ada", "nobody")}
    hosts = {store.topology.master_of(s) for s in {1, 2, 9} | lookup_shards}
    assert together.count == (len(hosts) if store.dialect(1).several_statements else 7)


def test_a_failing_statement_in_a_batch_leaves_no_connection_out_of_step(
    plain_store: Store,
) -> None:
    store = plain_store
    note = store.objects("note").create(3, {"title": "kept"})
    broken = [
        Select(3, "SELECT 1", ()),
        Select(4, "SELECT no_such_column FROM {db}.notes", ()),
        Select(5, "SELECT 2", ()),
    ]
    for _ in range(2):  # the next batch on the host is not handed the failed one's results
        with pytest.raises(Exception, match="no_such_column"):
            store.select_each(broken)
        assert store.select_each([Select(3, "SELECT 7", ()), Select(4, "SELECT 8", ())]) == [
            [(7,)],
            [(8,)],
        ]
    assert store.objects("note").get(note) == {"id": note, "title": "kept"}


def test_a_hosts_selects_of_objects_are_one_union_that_gives_each_its_rows() -> None:
    notes = Select(1, "SELECT notes", [1], frozenset({11, 12}), parts=2)
    listed = Select(1, "SELECT a list", [2])
    accounts = Select(1, "SELECT accounts", [3], frozenset({12, 31}))
    more = Select(1, "SELECT more notes", [4], frozenset({13}), parts=2)
    sent, spread = fewest_statements([notes, listed, accounts, more], max_union=4)
    # Objects first, joined while the union has room (2 + 1 SELECTs, then 2 more: a new one).
    assert [(s.sql, list(s.params)) for s in sent] == [
        ("SELECT notes UNION ALL SELECT accounts", [1, 3]),
        ("SELECT more notes", [4]),
        ("SELECT a list", [2]),
    ]
    rows = [[(11, "n"), (12, "both"), (31, "a")], [(13, "m")], [(7, 1)]]
    # An ID two SELECTs asked for goes to both; a union of one is passed through whole.
    assert spread(rows) == [
        [(11, "n"), (12, "both")],
        [(7, 1)],
        [(12, "both"), (31, "a")],
        [(13, "m")],
    ]
    alone, same = fewest_statements([listed, notes], max_union=4)
    assert alone == [listed, notes] and same(rows[:2]) == rows[:2]


def test_objects_of_several_tables_on_one_shard_are_read_in_one_statement(
    plain_store: Store,
) -> None:
    store = plain_store
    note = store.objects("note").create(1, {"title": "a"})
    owner = store.objects("account").create(1, {"login": "ada"})

    def plans() -> list[Selects[object]]:
        return [
            store.objects("note").selecting_stored([note], counts=True),
            store.objects("account").selecting_stored([owner], counts=False),
        ]

    alone = [plan.run() for plan in plans()]
    assert list(alone[0]) == [note] and list(alone[1]) == [owner]
    with store.count_queries() as together:  # SQLite's statements, MySQL's round trips
        assert run_together(plans()) == alone
    assert together.count == 1
