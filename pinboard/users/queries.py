"""Reading pinners: by ID, by username, many at once, with their counts."""

from __future__ import annotations

from typing import Any

from shardstore import InvalidKey

from ..store import get_store

#: The counts a user carries: followers, following, boards, pins.
USER_COUNTS = ("user_followed_by_users", "user_follows_users", "user_has_boards", "user_has_pins")


def get_user(user_id: int, *, counts: bool = True) -> dict[str, Any] | None:
    return get_store().objects("user").get(user_id, counts=USER_COUNTS if counts else ())


def get_users(user_ids: list[int], *, counts: bool = False) -> list[dict[str, Any]]:
    return get_store().objects("user").get_many(user_ids, counts=USER_COUNTS if counts else ())


def user_id_for(lookup: str, key: str) -> int | None:
    """The user ID a username or email maps to (None for unknown or malformed keys)."""
    try:
        return get_store().lookup(lookup).get(key)
    except InvalidKey:
        return None


def get_user_by_username(username: str, *, counts: bool = True) -> dict[str, Any] | None:
    user_id = user_id_for("username", username)
    return get_user(user_id, counts=counts) if user_id else None
