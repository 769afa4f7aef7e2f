"""Likes: user_likes_pins, with pin_liked_by_users as its inverse."""

from __future__ import annotations

from ..boards.privacy import visible_pin
from ..data_plane import cached_store


def like(actor_id: int, pin_id: int) -> None:
    visible_pin(actor_id, pin_id)
    cached_store().mapping("user_likes_pins").add(actor_id, pin_id)


def unlike(actor_id: int, pin_id: int) -> None:
    cached_store().mapping("user_likes_pins").remove(actor_id, pin_id)
