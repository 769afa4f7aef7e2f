"""A pinner's notifications from MySQL: what the mapping tables still record of what
others did to them, for a Redis that lost its data or a list to check.

Each kind comes from one list per object of the pinner's, its rows' sequences being
the entries' times, as ``announce`` delivered them:

- likes: ``pin_liked_by_users`` of each of their pins (the liker);
- saves: ``pin_saved_as_pins`` of each pin (the owner of the copy; one entry per pinner
  and pin, the latest save; none for a copy on a secret board);
- comments: ``pin_has_comments`` of each pin (the comment's author);
- follows: ``user_followed_by_users`` of the pinner;
- board follows: ``board_followed_by_users`` of each of their boards.

What was undone since is not recorded any more and does not come back: an unlike, an
unfollow, a deleted comment, and a board follow that a follow of its owner took over
(the board is then followed through the owner, and the explicit row goes). The newest
``length`` are kept; each list is read 50 rows deep first, and deeper only while all it
gave would make that cut.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from shardstore.mappings import all_ids
from social.notifications import Entry, newest_first
from social.rules import announces_save, board_list, pin_list

from ..data_plane import cached_store, get_notifications
from .kinds import BOARD_FOLLOW, COMMENT, FOLLOW, LIKE, SAVE

#: How deep each list is read first; then as deep as the list of notifications is long.
FIRST_DEPTH = 50


@dataclass(frozen=True)
class Source:
    """A mapping table that records one kind: who acted, on what."""

    kind: str
    relation: str
    #: The type of the rows' to-IDs whose objects name the actor (their ``field``), or
    #: None when the to-ID is the actor.
    via: tuple[str, str] | None = None
    object_is_row: bool = False  # the object is the row's to-ID (a comment), not its list's


SOURCES = (
    Source(LIKE, "pin_liked_by_users"),
    Source(SAVE, "pin_saved_as_pins", via=("pin", "owner_id")),
    Source(COMMENT, "pin_has_comments", via=("comment", "author_id"), object_is_row=True),
    Source(FOLLOW, "user_followed_by_users"),
    Source(BOARD_FOLLOW, "board_followed_by_users"),
)


@dataclass
class _Actors:
    """Who made each saved pin and each comment, looked up once across rounds."""

    found: dict[tuple[str, int], int | None] = field(default_factory=dict)

    def of(self, source: Source, to_id: int) -> int | None:
        if source.via is None:
            return to_id
        return self.found.get((source.via[0], to_id))

    def look_up(self, rows: dict[tuple[Source, int], list[tuple[int, int]]]) -> None:
        wanted: dict[str, set[int]] = {}
        for (source, _), got in rows.items():
            if source.via is not None:
                missing = {t for t, _ in got if (source.via[0], t) not in self.found}
                wanted.setdefault(source.via[0], set()).update(missing)
        fields = {s.via[0]: s.via[1] for s in SOURCES if s.via is not None}
        for type_name, ids in wanted.items():
            objects = cached_store().objects(type_name).get_many(sorted(ids))
            if type_name == "pin":  # a save to a secret board told no one (save_pin)
                objects = _on_public_boards(objects)
            by_id = {o["id"]: int(o[fields[type_name]]) for o in objects}
            self.found.update({(type_name, i): by_id.get(i) for i in ids})


def _on_public_boards(pins: list[dict[str, Any]]) -> list[dict[str, Any]]:
    boards = cached_store().objects("board").get_many(sorted({p["board_id"] for p in pins}))
    public = {board["id"] for board in boards if announces_save(board)}
    return [pin for pin in pins if pin["board_id"] in public]


def expected_notifications(user_id: int, *, length: int | None = None) -> list[Entry]:
    """The pinner's notifications as MySQL implies them, newest first."""
    length = length or get_notifications().length
    store = cached_store()
    lists_of: dict[str, list[int]] = {
        "pin": all_ids(store.mapping(pin_list(secret=False)), user_id),
        "board": all_ids(store.mapping(board_list(secret=False)), user_id),
        "user": [user_id],
    }
    wanted = {s: lists_of[store.catalog.relation(s.relation).from_type] for s in SOURCES}
    rows: dict[tuple[Source, int], list[tuple[int, int]]] = {}
    actors = _Actors()
    entries: list[Entry] = []
    for depth in sorted({min(FIRST_DEPTH, length), length}):
        for source, from_ids in wanted.items():
            if from_ids:
                read = store.mapping(source.relation).rows_many(from_ids, limit=depth)
                rows.update({(source, f): r for f, r in read.items()})
        actors.look_up(rows)
        entries = _newest(user_id, rows, actors.of, length)
        cut = entries[-1].sequence if len(entries) == length else None
        wanted = {}
        for (source, from_id), got in rows.items():
            if len(got) == depth and (cut is None or got[-1][1] >= cut):
                wanted.setdefault(source, []).append(from_id)  # all it gave made the cut
        if not wanted:
            break
    return entries


def _newest(
    user_id: int,
    rows: dict[tuple[Source, int], list[tuple[int, int]]],
    actor_of: Callable[[Source, int], int | None],
    length: int,
) -> list[Entry]:
    latest: dict[str, Entry] = {}  # by member: one entry per kind, actor and object
    for (source, from_id), got in rows.items():
        for to_id, sequence in got:
            actor = actor_of(source, to_id)
            if actor is None or actor == user_id:  # gone, or their own doing
                continue
            entry = Entry(sequence, source.kind, actor, to_id if source.object_is_row else from_id)
            if entry.member not in latest or latest[entry.member].sequence < sequence:
                latest[entry.member] = entry
    return newest_first(latest.values())[:length]


def rebuild_notifications(user_id: int) -> bool:
    """Rewrite the pinner's notifications from MySQL (their read mark stays); False if
    deliveries kept changing the list through every attempt."""
    return get_notifications().replace(user_id, lambda: expected_notifications(user_id))
