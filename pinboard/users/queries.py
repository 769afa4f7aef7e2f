"""Reading pinners: by ID, by username, many at once, with their counts."""

from __future__ import annotations

from typing import cast

from shardstore import InvalidKey
from shardstore.cache import Read

from ..data_plane import cached_store
from ..entities import User, UserCounts

#: The counts a user carries, as its TypedDict names them.
USER_COUNTS = tuple(UserCounts.__annotations__)


def get_user(user_id: int, *, counts: bool = True) -> User | None:
    return reading_user(user_id, counts=counts).run()


def reading_user(user_id: int, *, counts: bool = True) -> Read[User | None]:
    """``get_user`` as a read to make with others at one step of a page."""
    read = cached_store().objects("user").reading_one(user_id, counts=USER_COUNTS if counts else ())
    return cast("Read[User | None]", read)


def reading_users(user_ids: list[int], *, counts: bool = False) -> Read[list[User]]:
    """``get_users`` as a read to make with others at one step of a page."""
    read = cached_store().objects("user").reading(user_ids, counts=USER_COUNTS if counts else ())
    return cast("Read[list[User]]", read)


def get_users(user_ids: list[int], *, counts: bool = False) -> list[User]:
    users = cached_store().objects("user").get_many(user_ids, counts=USER_COUNTS if counts else ())
    return cast("list[User]", users)


def user_id_for(lookup: str, key: str) -> int | None:
    """The user ID a username or email maps to (None for unknown or malformed keys)."""
    try:
        return cached_store().lookup(lookup).get(key)
    except InvalidKey:
        return None


def get_user_by_username(username: str, *, counts: bool = True) -> User | None:
    user_id = user_id_for("username", username)
    return get_user(user_id, counts=counts) if user_id else None
