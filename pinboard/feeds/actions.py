"""Writes to home feeds: fan a new pin out, merge or drop a followed pinner's or board's pins,
rebuild the feed of a pinner who comes back after a long time."""

from __future__ import annotations

from typing import Any

from shardstore.mappings import all_ids

from ..store import get_feeds, get_store

#: How many recent pins of a pinner or board a new follow merges in.
MERGE_PINS = 100
#: A rebuild takes this many recent pins of each followed board.
REBUILD_PINS_PER_BOARD = 50


def publish(pin: dict[str, Any], sequence: int) -> None:
    """A pin was created or saved: fan it out to the followers of its board (Celery)."""
    from .tasks import fan_out_pin

    fan_out_pin.delay(pin["id"], sequence)


def _entries(relation: str, from_ids: list[int], limit: int) -> list[tuple[int, int]]:
    """(sequence, pin_id) of the newest pins of each list."""
    rows = get_store().mapping(relation).rows_many(from_ids, limit=limit)
    return [(sequence, pin_id) for entries in rows.values() for pin_id, sequence in entries]


def merge_pinner(actor_id: int, user_id: int) -> None:
    get_feeds().merge(actor_id, _entries("user_has_pins", [user_id], MERGE_PINS))


def merge_board(actor_id: int, board_id: int) -> None:
    get_feeds().merge(actor_id, _entries("board_has_pins", [board_id], MERGE_PINS))


def _drop(actor_id: int, field: str, value: int) -> None:
    feeds = get_feeds()
    pin_ids = [pin_id for _, pin_id in feeds.entries(actor_id)]
    pins = get_store().objects("pin").get_many(pin_ids, include_inactive=True)
    doomed = {pin["id"] for pin in pins if pin.get(field) == value}
    if doomed:
        feeds.remove_pins(actor_id, doomed)


def drop_pinner(actor_id: int, user_id: int) -> None:
    """After an unfollow of a pinner: their pins leave the feed."""
    _drop(actor_id, "owner_id", user_id)


def drop_board(actor_id: int, board_id: int) -> None:
    """After an unfollow of a board: its pins leave the feed."""
    _drop(actor_id, "board_id", board_id)


def rebuild(user_id: int) -> None:
    """The feed from MySQL: recent pins of every board followed (explicitly or through
    its owner, less unfollowed boards), and the pinner's own."""
    store = get_store()
    followed_users = all_ids(store.mapping("user_follows_users"), user_id)
    boards_of_followed = store.mapping("user_has_boards").rows_many(followed_users, limit=1000)
    unfollowed = set(all_ids(store.mapping("user_unfollows_boards"), user_id))
    boards = {b for rows in boards_of_followed.values() for b, _ in rows} - unfollowed
    boards.update(all_ids(store.mapping("user_follows_boards"), user_id))
    entries = _entries("board_has_pins", sorted(boards), REBUILD_PINS_PER_BOARD) if boards else []
    entries += _entries("user_has_pins", [user_id], MERGE_PINS)
    get_feeds().replace(user_id, entries)
