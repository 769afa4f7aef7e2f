"""``manage.py search rebuild|check|counts``: an index made from the shards is the index the
tasks keep, a drifted one is repaired, and a rebuild cut short resumes where it stopped."""

from __future__ import annotations

import io
import secrets
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from pinboard.boards.actions import create_board, delete_board, update_board
from pinboard.data_plane import cached_store
from pinboard.pins.actions import create_pin, delete_pin, save_pin, update_pin
from pinboard.search import plane
from pinboard.search.index import Document, SearchIndex
from pinboard.search.rebuild import PROGRESS, rebuild
from pinboard.users.actions import delete_account, update_profile
from shardstore import compose, shard_of
from tests.site.conftest import PLANE
from toolkit.images import image_upload

User = dict[str, Any]


@pytest.fixture
def empty_index(
    request: pytest.FixtureRequest, tmp_path: Any
) -> Iterator[Callable[[str], SearchIndex]]:
    """``empty_index(name)``: a new index on the plane's backend, with nothing in it."""
    opened: list[SearchIndex] = []

    def make(name: str) -> SearchIndex:
        if PLANE == "servers":
            server = request.getfixturevalue("site_servers").search.rsplit("/", 1)[0]
            index = plane.open_index(f"{server}/{name}")
        else:
            index = plane.open_index(f"sqlite://{tmp_path / name}.sqlite3")
        index.clear()
        index.set_state(PROGRESS, None)
        opened.append(index)
        return index

    yield make
    for index in opened:
        index.close()


@pytest.fixture
def world(make_user: Callable[..., User], empty_index: Callable[[str], SearchIndex]) -> Any:
    """What pinners made through the actions, kept in an index of its own by the tasks:
    (that index, {kind: IDs of everything made, deleted things too})."""
    live = empty_index("search_live")
    previous = plane.use(live)
    try:
        w = "zq" + secrets.token_hex(5)
        ann, bob, gone = make_user("ann"), make_user("bob"), make_user("gone")
        update_profile(ann["id"], {"display_name": f"Ann {w}", "about": "Jams"})
        pantry = create_board(ann["id"], f"Pantry {w}", "Shelves")
        diary = create_board(ann["id"], "Diary", secret=True)
        old = create_board(ann["id"], "Old")
        pins = [create_pin(ann["id"], pantry["id"], image_upload(), f"Jar {n} {w}") for n in (1, 2)]
        pins.append(create_pin(ann["id"], diary["id"], image_upload(), "Secret"))
        pins.append(create_pin(ann["id"], old["id"], image_upload(), "In the old board"))
        bobs = create_board(bob["id"], "Bob's")
        pins.append(save_pin(bob["id"], pins[0]["id"], bobs["id"]))
        update_board(ann["id"], pantry["id"], {"name": f"Larder {w}"})
        update_board(ann["id"], diary["id"], {"secret": False})
        update_pin(ann["id"], pins[1]["id"], {"board_id": diary["id"], "description": "Moved"})
        delete_pin(ann["id"], pins[0]["id"])
        delete_board(ann["id"], old["id"])
        gones = create_board(gone["id"], "Soon gone")
        pins.append(create_pin(gone["id"], gones["id"], image_upload(), "Soon gone"))
        delete_account(gone["id"], "plum-orchard-42")
    finally:
        plane.use(previous)
    made = {
        "user": [ann["id"], bob["id"], gone["id"]],
        "board": [board["id"] for board in (pantry, diary, old, gones, bobs)],
        "pin": [pin["id"] for pin in pins],
    }
    return live, made


def documents(index: SearchIndex, made: dict[str, list[int]]) -> dict[str, list[Document]]:
    return {
        kind: [d for i in ids for d in index.documents(kind, i, i)] for kind, ids in made.items()
    }


def test_a_rebuild_makes_the_index_the_tasks_keep(
    world: Any, empty_index: Callable[[str], SearchIndex]
) -> None:
    live, made = world
    kept = documents(live, made)
    assert [len(kept[kind]) for kind in ("user", "board", "pin")] == [2, 3, 3]
    rebuilt = empty_index("search_rebuilt")
    store = cached_store().store
    report = rebuild(store, rebuilt)
    assert report.shards == store.topology.shard_count and report.written >= 8
    assert documents(rebuilt, made) == kept
    again = rebuild(store, rebuilt)
    assert (again.written, again.removed, again.checked) == (0, 0, report.checked)
    assert not rebuild(store, rebuilt, repair=False).differs


def test_a_rebuild_repairs_what_drifted(
    world: Any, empty_index: Callable[[str], SearchIndex]
) -> None:
    live, made = world
    index = empty_index("search_drifted")
    store = cached_store().store
    rebuild(store, index)
    board_id, pin_id = made["board"][0], made["pin"][1]
    index.delete("pin", [pin_id])
    wrong = index.documents("board", board_id, board_id)[0]
    index.upsert([replace(wrong, name="something else")])
    ghost = compose(shard_of(pin_id), 1, 10**9)  # a pin no shard holds
    index.upsert([Document("pin", ghost, "ghost", "", 1, None, False, 0)])
    check = rebuild(store, index, repair=False)
    assert (check.written, check.removed) == (2, 1)
    assert sorted(check.drift) == sorted(
        [f"pin {pin_id}: missing or different", f"board {board_id}: missing or different",
         f"pin {ghost}: indexed, but gone"]
    )  # fmt: skip
    assert index.documents("pin", ghost, ghost) != []  # a check changes nothing
    repaired = rebuild(store, index)
    assert (repaired.written, repaired.removed) == (2, 1)
    assert documents(index, made) == documents(live, made)
    assert index.documents("pin", ghost, ghost) == []


class Stopped(Exception):
    pass


def test_a_rebuild_cut_short_resumes_where_it_stopped(
    empty_index: Callable[[str], SearchIndex],
) -> None:
    index, store = empty_index("search_resumed"), cached_store().store
    shards = store.topology.shard_count
    done: list[int] = []

    def stop_after_five(shard: int, total: int) -> None:
        done.append(shard)
        if shard == 5:
            raise Stopped

    with pytest.raises(Stopped):
        rebuild(store, index, progress=stop_after_five)
    assert index.state(PROGRESS) == f"5/{shards}"
    assert not rebuild(store, index, repair=False).first_shard  # a check walks every shard
    done.clear()
    report = rebuild(store, index, progress=lambda shard, total: done.append(shard))
    assert report.first_shard == 5 and done == list(range(6, shards + 1))
    assert index.state(PROGRESS) is None
    assert rebuild(store, index, restart=True).first_shard == 0
    assert not rebuild(store, index, repair=False).differs


def test_the_search_command(world: Any, empty_index: Callable[[str], SearchIndex]) -> None:
    index = empty_index("search_command")
    previous = plane.use(index)
    try:
        with pytest.raises(CommandError, match="differs from the shards"):
            call_command("search", "check", stdout=io.StringIO(), stderr=io.StringIO())
        out = io.StringIO()
        call_command("search", "rebuild", stdout=out, stderr=io.StringIO())
        assert "search rebuild: " in out.getvalue() and "removed 0" in out.getvalue()
        call_command("search", "check", stdout=io.StringIO(), stderr=io.StringIO())
        out = io.StringIO()
        call_command("search", "counts", stdout=out)
        assert out.getvalue().splitlines()[0] == f"pin: {index.count('pin')}"
        out = io.StringIO()
        call_command("search", "optimize", stdout=out)
        assert out.getvalue() == "search index optimized\n"
        index.set_state(PROGRESS, f"3/{cached_store().topology.shard_count}")
        out = io.StringIO()
        call_command("search", "rebuild", stdout=out, stderr=io.StringIO())
        assert out.getvalue().startswith("resumed at shard 3\n")
    finally:
        plane.use(previous)
