"""Likes: user_likes_pins, with pin_liked_by_users as its inverse. A new like tells the
pin's owner; liking again what one likes already tells nobody.

A like of a pin on a secret board is also listed in ``SECRET_LIKES``, so that a pinner's
likes count leaves it out (``entities.pinner_stats``), as their pin count leaves out their
secret pins: whoever is shown the count, it tells nothing of the secret boards. The
board's privacy task moves its pins' likes in or out of that list when its flag changes
(``follow_board``); the ``secret-likes`` job lists those from before it (backfill.py)."""

from __future__ import annotations

from shardstore.mappings import now_sequence, pages_of
from social.rules import is_secret

from ..boards.privacy import actionable_pin
from ..data_plane import cached_store
from ..notifications.actions import announce
from ..notifications.kinds import LIKE

#: A pinner's likes of pins on secret boards: a part of their ``user_likes_pins``.
SECRET_LIKES = "user_likes_secret_pins"
BATCH = 1000


def like(actor_id: int, pin_id: int) -> None:
    pin, board = actionable_pin(actor_id, pin_id)
    sequence, store = now_sequence(), cached_store()
    if is_secret(board):  # first: a like is never counted in public, not even for a moment
        store.mapping(SECRET_LIKES).add(actor_id, pin_id, sequence=sequence)
    if store.mapping("user_likes_pins").add(actor_id, pin_id, sequence=sequence):
        announce(pin["owner_id"], LIKE, actor_id, pin_id, sequence)


def unlike(actor_id: int, pin_id: int) -> None:
    store = cached_store()
    store.mapping("user_likes_pins").remove(actor_id, pin_id)
    store.mapping(SECRET_LIKES).remove(actor_id, pin_id)  # last: as ``like``, the other way


def forget_likes(pin_id: int) -> None:
    """Every like of a deleted pin, off its likers' lists (its purge)."""
    store = cached_store()
    for user_ids in pages_of(store.mapping("pin_liked_by_users"), pin_id, batch=BATCH):
        for user_id in user_ids:
            unlike(user_id, pin_id)


def follow_board(pin_id: int, secret: bool) -> int:
    """The likes of a pin whose board was made secret, or public: into ``SECRET_LIKES``, or
    out of it. Returns how many moved (none, for a second run)."""
    store = cached_store()
    secret_likes, moved = store.mapping(SECRET_LIKES), 0
    for user_ids in pages_of(store.mapping("pin_liked_by_users"), pin_id, batch=BATCH):
        for user_id in user_ids:
            if secret:
                moved += secret_likes.add(user_id, pin_id)
            else:
                moved += secret_likes.remove(user_id, pin_id)
    return moved
