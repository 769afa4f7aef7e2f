"""Follow state: who follows whom, and whether a pinner follows a board."""

from __future__ import annotations

from typing import Any

from shardstore import Page

from ..store import get_store


def follows_user(actor_id: int, user_id: int) -> bool:
    return get_store().mapping("user_follows_users").contains(actor_id, user_id)


def follows_board(actor_id: int, board: dict[str, Any]) -> bool:
    """Explicitly, or through its owner and not unfollowed: one query on the actor's shard."""
    found = get_store().edges_exist(
        [
            ("user_follows_boards", actor_id, board["id"]),
            ("user_follows_users", actor_id, board["owner_id"]),
            ("user_unfollows_boards", actor_id, board["id"]),
        ]
    )
    relations = {relation for relation, _, _ in found}
    return "user_follows_boards" in relations or (
        "user_follows_users" in relations and "user_unfollows_boards" not in relations
    )


def followed_among(actor_id: int, user_ids: list[int]) -> list[int]:
    """Which of ``user_ids`` the actor follows: one query."""
    return get_store().mapping("user_follows_users").filter(actor_id, user_ids)


def followers_page(user_id: int, *, limit: int = 50, cursor: str | None = None) -> Page:
    return get_store().mapping("user_followed_by_users").page(user_id, limit=limit, cursor=cursor)


def following_page(user_id: int, *, limit: int = 50, cursor: str | None = None) -> Page:
    return get_store().mapping("user_follows_users").page(user_id, limit=limit, cursor=cursor)
