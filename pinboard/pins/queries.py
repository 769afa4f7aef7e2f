"""Reading pins and their comments, and the pinners and boards a page of pins names (who
may see or change a pin is ``boards.privacy``'s)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from shardstore import Page
from shardstore.cache import Read

from ..boards.queries import get_boards
from ..data_plane import cached_store
from ..entities import Board, Comment, CommentAuthor, Pin, PinCounts, User
from ..users.queries import get_users

#: The counts a pin carries, as its TypedDict names them.
PIN_COUNTS = tuple(PinCounts.__annotations__)


def get_pin(pin_id: int) -> Pin | None:
    return reading_pin(pin_id).run()


def reading_pin(pin_id: int) -> Read[Pin | None]:
    """``get_pin`` as a read to make with others at one step of a page."""
    return cast(
        "Read[Pin | None]", cached_store().objects("pin").reading_one(pin_id, counts=PIN_COUNTS)
    )


def get_pins(pin_ids: list[int], *, counts: bool = True) -> list[Pin]:
    pins = cached_store().objects("pin").get_many(pin_ids, counts=PIN_COUNTS if counts else ())
    return cast("list[Pin]", pins)


def reading_pins(pin_ids: list[int], *, counts: bool = True) -> Read[list[Pin]]:
    """``get_pins`` as a read to make with others (``counts``: with them)."""
    read = cached_store().objects("pin").reading(pin_ids, counts=PIN_COUNTS if counts else ())
    return cast("Read[list[Pin]]", read)


def pinners_and_boards(
    pins: list[Pin],
    *,
    known_pinners: Iterable[User] = (),
    known_boards: Iterable[Board] = (),
) -> tuple[dict[int, User], dict[int, Board]]:
    """The pinners and boards the pins name, each by ID, for the grid's cards: those the
    page has read already (``known_*``: a board page's owner and board, a list's boards,
    the signed-in pinner), the others in one multi-get of boards and one of users (the
    pins' pinners and the boards' owners: a group board's pin may be a collaborator's).
    A pin lives on its board's shard, which is its owner's, so both mostly read the shards
    the pins came from. Deleted pinners and boards are left out."""
    pinners = {pinner["id"]: pinner for pinner in known_pinners}
    boards = {board["id"]: board for board in known_boards}
    missing = [i for i in dict.fromkeys(pin["board_id"] for pin in pins) if i not in boards]
    if missing:
        boards.update((board["id"], board) for board in get_boards(missing, counts=False))
    people = [pin["owner_id"] for pin in pins] + [board["owner_id"] for board in boards.values()]
    missing = [i for i in dict.fromkeys(people) if i not in pinners]
    if missing:
        pinners.update((user["id"], user) for user in get_users(missing))
    return pinners, boards


def board_pins_page(board_id: int, *, limit: int = 50, cursor: str | None = None) -> Page:
    """A board's pin IDs, newest first."""
    return reading_board_pins(board_id, limit=limit, cursor=cursor).run()


def reading_board_pins(board_id: int, *, limit: int = 50, cursor: str | None = None) -> Read[Page]:
    """``board_pins_page`` as a read to make with others at one step of a page."""
    return (
        cached_store().mapping("board_has_pins").reading_page(board_id, limit=limit, cursor=cursor)
    )


def get_comment(comment_id: int) -> Comment | None:
    return cast("Comment | None", cached_store().objects("comment").get(comment_id))


def get_comments(comment_ids: list[int]) -> list[Comment]:
    return cast("list[Comment]", cached_store().objects("comment").get_many(comment_ids))


def reading_comments(pin_id: int, *, limit: int = 50, cursor: str | None = None) -> Read[Page]:
    """A page of a pin's comment IDs, oldest first, as a read to make with others."""
    mapping = cached_store().mapping("pin_has_comments")
    return mapping.reading_page(pin_id, limit=limit, cursor=cursor, oldest_first=True)


def reading_comments_of(page: Page) -> Read[list[Comment]]:
    """The comments of a page of their IDs, each with ``author`` (ID and username, kept in
    the comment when it was written: authors live on any shard, and a page of comments
    must not cost a query per shard of its authors), as a read to make with others."""
    read = cast("Read[list[Comment]]", cached_store().objects("comment").reading(page.ids))
    return read.then(_with_authors)


def _with_authors(comments: list[Comment]) -> list[Comment]:
    for comment in comments:
        author: CommentAuthor = {"id": comment["author_id"], "username": comment["author_username"]}
        comment["author"] = author
    return comments
