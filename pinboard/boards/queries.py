"""Reading boards: one board, a pinner's boards (and what their cards show of their pins),
a board by its owner's slug. Who may see or change one: ``privacy``; the cards:
``grid.board_cards``."""

from __future__ import annotations

from typing import TypedDict, cast

from shardstore import InvalidKey, Page
from shardstore.cache import Read, read_together
from shardstore.mappings import all_ids
from social.rules import board_list, is_secret

from ..data_plane import cached_store
from ..entities import Board, BoardCounts, Pin

#: The counts a board carries, as its TypedDict names them. Its follower count also needs
#: the owner's follower count (seed 004: following a pinner follows all their boards).
BOARD_COUNTS = tuple(BoardCounts.__annotations__)


def get_board(board_id: int) -> Board | None:
    return reading_board(board_id).run()


def reading_board(board_id: int) -> Read[Board | None]:
    """``get_board`` as a read to make with others at one step of a page."""
    read = cached_store().objects("board").reading_one(board_id, counts=BOARD_COUNTS)
    return cast("Read[Board | None]", read)


def reading_boards(board_ids: list[int], *, counts: bool = True) -> Read[list[Board]]:
    """``get_boards`` as a read to make with others at one step of a page."""
    read = cached_store().objects("board").reading(board_ids, counts=BOARD_COUNTS if counts else ())
    return cast("Read[list[Board]]", read)


def get_boards(board_ids: list[int], *, counts: bool = True) -> list[Board]:
    boards = (
        cached_store().objects("board").get_many(board_ids, counts=BOARD_COUNTS if counts else ())
    )
    return cast("list[Board]", boards)


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
    secret, public, group = read_together(  # one step: all three are on the pinner's shard
        store.mapping(board_list(True)).reading_page(user_id, limit=limit),
        store.mapping(board_list(False)).reading_page(user_id, limit=limit),
        store.mapping("user_collaborates_on_boards").reading_page(user_id, limit=limit),
    )
    return (secret.ids + public.ids + group.ids)[:limit]


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


class BoardStats(TypedDict):
    """A board's counts by the names the pages and the API show them under."""

    pin_count: int
    follower_count: int


def board_stats(board: Board, owner_follower_count: int) -> BoardStats:
    return {
        "pin_count": board["counts"]["board_has_pins"],
        "follower_count": follower_count(board, owner_follower_count),
    }


def follower_count(board: Board, owner_follower_count: int) -> int:
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


def reading_covers(board_ids: list[int]) -> Read[dict[int, Page]]:
    """What boards' cards show of their pins (``grid.board_cards``), as a read to make with
    others: each board's first page of pins (its newest is the cover), by board ID."""
    return cached_store().mapping("board_has_pins").reading_pages(board_ids, limit=1)


def cover_pins(covers: dict[int, Page]) -> dict[int, Pin]:
    """The cover pins of boards' first pages (``reading_covers``), by ID: one multi-get."""
    pins = cast("list[Pin]", cached_store().objects("pin").get_many(cover_ids(covers)))
    return {pin["id"]: pin for pin in pins}


def cover_ids(covers: dict[int, Page]) -> list[int]:
    """The cover pins' IDs: the newest pin of each board (``covers``: their first pages)."""
    return [page.ids[0] for page in covers.values() if page.ids]
