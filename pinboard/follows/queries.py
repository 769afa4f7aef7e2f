"""Follow state, read from the Redis follower graph (one round trip each)."""

from __future__ import annotations

from shardstore import Page

from ..data_plane import get_graph
from ..entities import Board


def follows_user(actor_id: int, user_id: int) -> bool:
    return get_graph().follows_user(actor_id, user_id)


def follows_board(actor_id: int, board: Board) -> bool:
    """Explicitly, or through its owner and not unfollowed."""
    return get_graph().follows_board(actor_id, board["id"], board["owner_id"])


def followed_among(actor_id: int, user_ids: list[int]) -> list[int]:
    """Which of ``user_ids`` the actor follows."""
    return get_graph().followed_among(actor_id, user_ids)


def followers_page(user_id: int, *, limit: int = 50, cursor: str | None = None) -> Page:
    return get_graph().followers_page(user_id, limit=limit, cursor=cursor)


def following_page(user_id: int, *, limit: int = 50, cursor: str | None = None) -> Page:
    return get_graph().following_page(user_id, limit=limit, cursor=cursor)
