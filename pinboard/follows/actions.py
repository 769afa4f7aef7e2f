"""Follows, with the semantics of Pinterest's follower model (seed 004).

Following a pinner follows all their boards, present and future. A follower
of the pinner may unfollow single boards (user_unfollows_boards); someone who
does not follow the pinner may follow single boards (user_follows_boards).
The actions keep three sets of a board apart, so counts are sums:

- explicit board followers never follow the owner (following the owner
  subsumes their board follows);
- only followers of the owner are board unfollowers (unfollowing the owner
  forgets their board unfollows).

So unfollowing a pinner unfollows all of their boards, as Pinterest's
"unfollow" on a profile does; follow a board again to keep it.
"""

from __future__ import annotations

from ..boards.queries import get_board
from ..errors import InvalidField, NotFoundError
from ..store import get_store
from ..users.queries import get_user


def _boards_of(user_id: int) -> list[int]:
    store = get_store()
    board_ids: list[int] = []
    cursor = None
    while True:
        page = store.mapping("user_has_boards").page(user_id, limit=1000, cursor=cursor)
        board_ids += page.ids
        if page.cursor is None:
            return board_ids
        cursor = page.cursor


def follow_user(actor_id: int, user_id: int) -> None:
    if actor_id == user_id:
        raise InvalidField("you cannot follow yourself", field="user_id")
    if get_user(user_id, counts=False) is None:
        raise NotFoundError("no such user")
    store = get_store()
    store.mapping("user_follows_users").add(actor_id, user_id)
    boards = _boards_of(user_id)
    if boards:
        for board_id in store.mapping("user_follows_boards").filter(actor_id, boards):
            store.mapping("user_follows_boards").remove(actor_id, board_id)
        for board_id in store.mapping("user_unfollows_boards").filter(actor_id, boards):
            store.mapping("user_unfollows_boards").remove(actor_id, board_id)


def unfollow_user(actor_id: int, user_id: int) -> None:
    store = get_store()
    store.mapping("user_follows_users").remove(actor_id, user_id)
    boards = _boards_of(user_id)
    if boards:
        for board_id in store.mapping("user_unfollows_boards").filter(actor_id, boards):
            store.mapping("user_unfollows_boards").remove(actor_id, board_id)


def follow_board(actor_id: int, board_id: int) -> None:
    board = get_board(board_id)
    if board is None:
        raise NotFoundError("no such board")
    if board["owner_id"] == actor_id:
        raise InvalidField("you cannot follow your own board", field="board_id")
    store = get_store()
    if store.mapping("user_follows_users").contains(actor_id, board["owner_id"]):
        store.mapping("user_unfollows_boards").remove(actor_id, board_id)
    else:
        store.mapping("user_follows_boards").add(actor_id, board_id)


def unfollow_board(actor_id: int, board_id: int) -> None:
    board = get_board(board_id)
    if board is None:
        raise NotFoundError("no such board")
    store = get_store()
    if store.mapping("user_follows_users").contains(actor_id, board["owner_id"]):
        store.mapping("user_unfollows_boards").add(actor_id, board_id)
    else:
        store.mapping("user_follows_boards").remove(actor_id, board_id)
