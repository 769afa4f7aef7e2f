"""Writes to home feeds: fan a new pin out, merge or drop a followed pinner's or board's pins,
note a visit, and rebuild the feed of a pinner who comes back after a long time.

Each keeps the feed equal to what MySQL implies (``social.feed_sync.expected_feeds``,
which the rebuild uses): a follow merges as many of the pins as a feed holds, and an
unfollow that empties part of a full feed rebuilds it, since the older pins that now
make the cut were trimmed away. ``python manage.py follower_graph check`` compares.
"""

from __future__ import annotations

from shardstore.redis_shards import RedisWritesRefused
from social.feed_sync import rebuild_feed
from social.feeds import FEED_LENGTH
from social.rules import pin_list

from ..data_plane import cached_store, get_feeds
from ..entities import Pin
from .tasks import fan_out_pin

#: How many recent pins of a pinner or board a new follow merges in: all a feed can hold.
MERGE_PINS = FEED_LENGTH

#: How many of a followed pinner's newest pins the follow reads, to name their boards in
#: the feed (what its first pages show, read with their boards in one step). An entry
#: without one costs its page a second step, if it is ever shown; the follow itself
#: stays one small multi-get however many pins the pinner has.
NAMED_PINS = 100


def send_to_followers(pin: Pin, sequence: int) -> None:
    """A pin was created or saved: fan it out to the followers of its board (Celery)."""
    fan_out_pin.delay(pin["id"], sequence)


def note_visit(user_id: int) -> None:
    """A home feed's first page is read: a pinner back after a long time (no fan-out
    reached them meanwhile) gets their feed rebuilt first. A process whose Redis writes
    are refused (cut off from its config source) shows the feed as it is: a read does
    not fail for a note it could not write."""
    try:
        seen = get_feeds().mark_seen(user_id)
    except RedisWritesRefused:
        return
    if not seen:
        rebuild(user_id)


def _entries(relation: str, from_id: int, limit: int) -> list[tuple[int, int]]:
    """(sequence, pin_id) of the newest pins of a list."""
    rows = cached_store().mapping(relation).rows_many([from_id], limit=limit)
    return [(sequence, pin_id) for pin_id, sequence in rows.get(from_id, [])]


def merge_pinner(actor_id: int, user_id: int) -> None:
    entries = _entries(pin_list(secret=False), user_id, MERGE_PINS)
    newest = [pin_id for _, pin_id in entries[:NAMED_PINS]]
    pins = cached_store().objects("pin").get_many(newest, include_inactive=True)
    get_feeds().merge(actor_id, entries, {pin["id"]: pin["board_id"] for pin in pins})


def merge_board(actor_id: int, board_id: int) -> None:
    entries = _entries("board_has_pins", board_id, MERGE_PINS)
    get_feeds().merge(actor_id, entries, dict.fromkeys((p for _, p in entries), board_id))


def _drop(actor_id: int, field: str, value: int) -> None:
    feeds = get_feeds()
    pin_ids = [pin_id for _, pin_id in feeds.entries(actor_id)]
    pins = cached_store().objects("pin").get_many(pin_ids, include_inactive=True)
    doomed = {pin["id"] for pin in pins if pin.get(field) == value}
    if doomed and len(pin_ids) >= feeds.length:
        rebuild(actor_id)  # full: older pins of other boards now make the cut
    elif doomed:
        feeds.remove_pins(actor_id, doomed)


def drop_pinner(actor_id: int, user_id: int) -> None:
    """After an unfollow of a pinner: their pins leave the feed."""
    _drop(actor_id, "owner_id", user_id)


def drop_board(actor_id: int, board_id: int) -> None:
    """After an unfollow of a board: its pins leave the feed."""
    _drop(actor_id, "board_id", board_id)


def rebuild(user_id: int) -> None:
    """The feed from MySQL: the pins of every board followed (explicitly or through its
    owner, less unfollowed boards) and the pinner's own, newest first."""
    rebuild_feed(cached_store(), get_feeds(), user_id)
