"""What a profile page reads: the pinner and their boards as cards, in four round trips to
the cache however many boards they have (the seeds' "Loading a Page", each step's reads
together): the username, then the pinner with their lists of boards (public, secret for
their own eyes, and the group boards they collaborate on), then the boards with their
newest pins' IDs, then the covers and the group boards' owners."""

from __future__ import annotations

from dataclasses import dataclass

from shardstore import Page
from shardstore.cache import Read, read_together
from social.rules import may_see

from ..boards.collaborators import reading_group_board_ids
from ..boards.queries import cover_ids, reading_boards, reading_boards_page, reading_covers
from ..entities import User
from ..errors import NotFoundError
from ..grid import BoardCard, board_cards
from ..pins.queries import reading_pins
from .queries import reading_user, reading_users, user_id_for

NO_BOARDS: Read[Page] = Read.done(Page([], None))


@dataclass(frozen=True)
class Profile:
    user: User
    boards: list[BoardCard]  # a page of the public boards
    next_cursor: str | None
    secret_boards: list[BoardCard]  # the viewer's own, on the first page
    group_boards: list[BoardCard]  # those the viewer may see, on the first page


def read_profile(username: str, viewer_id: int | None, cursor: str | None) -> Profile:
    """The profile of ``username`` as ``viewer_id`` sees it; NotFoundError if no such pinner."""
    user_id = user_id_for("username", username)
    if user_id is None:
        raise NotFoundError("no such pinner")
    first = cursor is None  # the secret and group boards show on the first page only
    user, public, secret, group = read_together(
        reading_user(user_id),
        reading_boards_page(user_id, cursor=cursor),
        reading_boards_page(user_id, secret=True) if first and viewer_id == user_id else NO_BOARDS,
        reading_group_board_ids(user_id) if first else NO_BOARDS,
    )
    if user is None:
        raise NotFoundError("no such pinner")
    ids = list(dict.fromkeys(public.ids + secret.ids + group.ids))
    found, covers = read_together(reading_boards(ids), reading_covers(ids))
    boards = {board["id"]: board for board in found}
    shown = [i for i in group.ids if i in boards and may_see(viewer_id, boards[i])]
    others = sorted({boards[i]["owner_id"] for i in shown} - {user_id})
    pins, owners = read_together(
        reading_pins(cover_ids(covers), counts=False),
        reading_users(others, counts=True),
    )
    cover_pins = {pin["id"]: pin for pin in pins}
    owners_by_id = {user_id: user, **{owner["id"]: owner for owner in owners}}

    def cards(listed: list[int]) -> list[BoardCard]:
        return board_cards(
            [boards[i] for i in listed if i in boards], owners_by_id, covers, cover_pins
        )

    return Profile(user, cards(public.ids), public.cursor, cards(secret.ids), cards(shown))
