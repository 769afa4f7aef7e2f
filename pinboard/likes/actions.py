"""Likes: user_likes_pins, with pin_liked_by_users as its inverse."""

from __future__ import annotations

from ..data_plane import cached_store
from ..errors import NotFoundError
from ..pins.queries import get_pin


def like(actor_id: int, pin_id: int) -> None:
    if get_pin(pin_id) is None:
        raise NotFoundError("no such pin")
    cached_store().mapping("user_likes_pins").add(actor_id, pin_id)


def unlike(actor_id: int, pin_id: int) -> None:
    cached_store().mapping("user_likes_pins").remove(actor_id, pin_id)
