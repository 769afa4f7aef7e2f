"""Reading boards: one board, a pinner's boards, a board by its owner's slug."""

from __future__ import annotations

from typing import Any

from shardstore import InvalidKey, Page

from ..store import get_store

#: The counts a board carries. Its follower count also needs the owner's
#: follower count (seed 004: following a pinner follows all their boards).
BOARD_COUNTS = ("board_has_pins", "board_followed_by_users", "board_unfollowed_by_users")


def get_board(board_id: int) -> dict[str, Any] | None:
    return get_store().objects("board").get(board_id, counts=BOARD_COUNTS)


def get_boards(board_ids: list[int]) -> list[dict[str, Any]]:
    return get_store().objects("board").get_many(board_ids, counts=BOARD_COUNTS)


def boards_page(user_id: int, *, limit: int = 50, cursor: str | None = None) -> Page:
    """A pinner's board IDs, newest first."""
    return get_store().mapping("user_has_boards").page(user_id, limit=limit, cursor=cursor)


def board_id_by_slug(owner_id: int, slug: str) -> int | None:
    try:
        return get_store().lookup("board_slug").get(slug_key(owner_id, slug))
    except InvalidKey:
        return None


def slug_key(owner_id: int, slug: str) -> str:
    return f"{owner_id}:{slug}"


def follower_count(board: dict[str, Any], owner_follower_count: int) -> int:
    """Explicit board followers, plus the owner's followers, less those who unfollowed it.

    The follow actions keep the three sets apart (a pinner who follows the
    owner is never also an explicit board follower, and only such pinners can
    unfollow the board), so the sum is exact.
    """
    counts = board["counts"]
    return (
        counts["board_followed_by_users"]
        + owner_follower_count
        - counts["board_unfollowed_by_users"]
    )
