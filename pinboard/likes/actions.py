"""Likes: user_likes_pins, with pin_liked_by_users as its inverse."""

from __future__ import annotations

from ..errors import NotFoundError
from ..pins.queries import get_pin
from ..store import get_store


def like(actor_id: int, pin_id: int) -> None:
    if get_pin(pin_id) is None:
        raise NotFoundError("no such pin")
    get_store().mapping("user_likes_pins").add(actor_id, pin_id)


def unlike(actor_id: int, pin_id: int) -> None:
    get_store().mapping("user_likes_pins").remove(actor_id, pin_id)
