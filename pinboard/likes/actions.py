"""Likes: user_likes_pins, with pin_liked_by_users as its inverse. A new like tells the
pin's owner; liking again what one likes already tells nobody."""

from __future__ import annotations

from shardstore.mappings import now_sequence

from ..boards.privacy import actionable_pin
from ..data_plane import cached_store
from ..notifications.actions import announce
from ..notifications.kinds import LIKE


def like(actor_id: int, pin_id: int) -> None:
    pin, _ = actionable_pin(actor_id, pin_id)
    sequence = now_sequence()
    if cached_store().mapping("user_likes_pins").add(actor_id, pin_id, sequence=sequence):
        announce(pin["owner_id"], LIKE, actor_id, pin_id, sequence)


def unlike(actor_id: int, pin_id: int) -> None:
    cached_store().mapping("user_likes_pins").remove(actor_id, pin_id)
