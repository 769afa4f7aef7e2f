"""Reading pinners: by ID, by username, many at once, with their counts."""

from __future__ import annotations

from typing import Any

from shardstore import InvalidKey
from shardstore.cache import Read

from ..data_plane import cached_store

#: The counts a user carries: followers, following, boards, pins, likes.
USER_COUNTS = (
    "user_followed_by_users",
    "user_follows_users",
    "user_has_boards",
    "user_has_pins",
    "user_likes_pins",
)


def get_user(user_id: int, *, counts: bool = True) -> dict[str, Any] | None:
    return reading_user(user_id, counts=counts).run()


def reading_user(user_id: int, *, counts: bool = True) -> Read[dict[str, Any] | None]:
    """``get_user`` as a read to make with others at one step of a page."""
    return cached_store().objects("user").reading_one(user_id, counts=USER_COUNTS if counts else ())


def get_users(user_ids: list[int], *, counts: bool = False) -> list[dict[str, Any]]:
    return cached_store().objects("user").get_many(user_ids, counts=USER_COUNTS if counts else ())


def user_id_for(lookup: str, key: str) -> int | None:
    """The user ID a username or email maps to (None for unknown or malformed keys)."""
    try:
        return cached_store().lookup(lookup).get(key)
    except InvalidKey:
        return None


def get_user_by_username(username: str, *, counts: bool = True) -> dict[str, Any] | None:
    user_id = user_id_for("username", username)
    return get_user(user_id, counts=counts) if user_id else None


def user_stats(user: dict[str, Any]) -> dict[str, int]:
    """A pinner's counts by the names a profile shows them under."""
    counts = user["counts"]
    return {
        "followers": counts["user_followed_by_users"],
        "following": counts["user_follows_users"],
        "boards": counts["user_has_boards"],
        "pins": counts["user_has_pins"],
        "likes": counts["user_likes_pins"],
    }
