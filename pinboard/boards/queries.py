"""Reading boards: one board, a pinner's boards (with their covers), the boards a pinner
collaborates on, a board by its owner's slug. Who may see or change one: ``privacy``."""

from __future__ import annotations

from typing import Any

from shardstore import InvalidKey, Page
from shardstore.cache import Read
from shardstore.mappings import all_ids
from social.rules import board_list, is_secret

from ..data_plane import cached_store
from ..grid import pin_item

#: The counts a board carries. Its follower count also needs the owner's
#: follower count (seed 004: following a pinner follows all their boards).
BOARD_COUNTS = ("board_has_pins", "board_followed_by_users", "board_unfollowed_by_users")


def get_board(board_id: int) -> dict[str, Any] | None:
    return reading_board(board_id).run()


def reading_board(board_id: int) -> Read[dict[str, Any] | None]:
    """``get_board`` as a read to make with others at one step of a page."""
    return cached_store().objects("board").reading_one(board_id, counts=BOARD_COUNTS)


def get_boards(board_ids: list[int]) -> list[dict[str, Any]]:
    return cached_store().objects("board").get_many(board_ids, counts=BOARD_COUNTS)


def boards_page(
    user_id: int, *, limit: int = 50, cursor: str | None = None, secret: bool = False
) -> Page:
    """A pinner's public (or secret) board IDs, newest first."""
    return reading_boards_page(user_id, limit=limit, cursor=cursor, secret=secret).run()


def reading_boards_page(
    user_id: int, *, limit: int = 50, cursor: str | None = None, secret: bool = False
) -> Read[Page]:
    """``boards_page`` as a read to make with others at one step of a page."""
    mapping = cached_store().mapping(board_list(secret))
    return mapping.reading_page(user_id, limit=limit, cursor=cursor)


def all_board_ids(user_id: int, *, secret: bool = False) -> list[int]:
    """Every public (or secret) board ID of a pinner, newest first (a pinner has few: one
    list, read whole)."""
    return all_ids(cached_store().mapping(board_list(secret)), user_id)


def pinnable_board_ids(user_id: int, *, limit: int) -> list[int]:
    """The boards a pinner may pin to, for a form's choice: their secret boards, their
    newest public ones, then the group boards they collaborate on; ``limit`` at most."""
    store = cached_store()
    lists = (board_list(True), board_list(False), "user_collaborates_on_boards")
    ids = [i for name in lists for i in store.mapping(name).page(user_id, limit=limit).ids]
    return ids[:limit]


def own_board_ids(user_id: int) -> list[int]:
    """Every board of a pinner, secret ones first: what only the pinner sees."""
    return all_board_ids(user_id, secret=True) + all_board_ids(user_id)


def board_id_by_slug(owner_id: int, slug: str) -> int | None:
    try:
        return cached_store().lookup("board_slug").get(slug_key(owner_id, slug))
    except InvalidKey:
        return None


def slug_key(owner_id: int, slug: str) -> str:
    return f"{owner_id}:{slug}"


def follower_count(board: dict[str, Any], owner_follower_count: int) -> int:
    """Explicit board followers, plus the owner's followers, less those who unfollowed it.

    The follow actions keep the three sets apart (a pinner who follows the
    owner is never also an explicit board follower, and only such pinners can
    unfollow the board), so the sum is exact. A secret board has none: no one else sees it.
    """
    if is_secret(board):
        return 0
    counts = board["counts"]
    return int(
        counts["board_followed_by_users"]
        + owner_follower_count
        - counts["board_unfollowed_by_users"]
    )


def board_cards(
    boards: list[dict[str, Any]], owners: dict[int, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Boards as cards: each with its newest pin as cover, its pin and follower counts and
    its owner's username. ``owners`` holds each board's owner, by ID, with counts (a
    board's followers include its owner's). Two round trips past the boards:
    board_has_pins of every board, then the cover pins (one each per shard, or per host,
    the boards are on)."""
    store = cached_store()
    covers = store.mapping("board_has_pins").page_many([b["id"] for b in boards], limit=1)
    cover_pins = {pin["id"]: pin for pin in store.objects("pin").get_many(cover_ids(covers))}
    return card_items(boards, owners, covers, cover_pins)


def cover_ids(covers: dict[int, Page]) -> list[int]:
    """The cover pins' IDs: the newest pin of each board (``covers``: their first pages)."""
    return [page.ids[0] for page in covers.values() if page.ids]


def card_items(
    boards: list[dict[str, Any]],
    owners: dict[int, dict[str, Any]],
    covers: dict[int, Page],
    cover_pins: dict[int, dict[str, Any]],
) -> list[dict[str, Any]]:
    """``board_cards`` from what was read: each board's first page of pins (``covers``,
    by board ID) and the cover pins, by ID."""
    items = []
    for board in boards:
        owner = owners.get(board["owner_id"])
        if owner is None:  # an account deleted, its boards not yet purged
            continue
        first = covers[board["id"]].ids[:1]
        cover = cover_pins.get(first[0]) if first else None
        owner_followers = owner["counts"]["user_followed_by_users"]
        items.append(
            {
                **board,
                "owner_username": owner["username"],
                "cover": pin_item(cover) if cover else None,
                "pin_count": board["counts"]["board_has_pins"],
                "follower_count": follower_count(board, owner_followers),
            }
        )
    return items
