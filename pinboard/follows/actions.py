"""Follows, with the semantics of Pinterest's follower model (seed 004).

Following a pinner follows all their boards, present and future. A follower
of the pinner may unfollow single boards (user_unfollows_boards); someone who
does not follow the pinner may follow single boards (user_follows_boards),
which makes them an implicit follower of the pinner. The actions keep three
sets of a board apart, so counts are sums:

- explicit board followers never follow the owner (following the owner
  subsumes their board follows);
- only followers of the owner are board unfollowers (unfollowing the owner
  forgets their board unfollows).

So unfollowing a pinner unfollows all of their boards, as Pinterest's
"unfollow" on a profile does; follow a board again to keep it.

Each action writes the MySQL mapping tables (the source of truth) first, then
mirrors the change into the Redis follower graph with the same sequence, then
edits the actor's home feed.
"""

from __future__ import annotations

from shardstore.mappings import all_ids, now_sequence

from ..boards.queries import get_board
from ..errors import InvalidField, NotFoundError
from ..feeds import actions as feeds
from ..store import get_graph, get_store
from ..users.queries import get_user


def boards_of(user_id: int) -> list[int]:
    return all_ids(get_store().mapping("user_has_boards"), user_id)


def follow_user(actor_id: int, user_id: int) -> None:
    if actor_id == user_id:
        raise InvalidField("you cannot follow yourself", field="user_id")
    if get_user(user_id, counts=False) is None:
        raise NotFoundError("no such user")
    store, sequence, edit = get_store(), now_sequence(), get_graph().edit()
    if store.mapping("user_follows_users").add(actor_id, user_id, sequence=sequence):
        edit.user_follow(actor_id, user_id, True, sequence)  # Redis scores = MySQL sequences
    boards = boards_of(user_id)
    if boards:
        for board_id in store.mapping("user_follows_boards").filter(actor_id, boards):
            store.mapping("user_follows_boards").remove(actor_id, board_id)
            edit.board_follow(actor_id, board_id, user_id, False, 0)
        for board_id in store.mapping("user_unfollows_boards").filter(actor_id, boards):
            store.mapping("user_unfollows_boards").remove(actor_id, board_id)
            edit.board_unfollow(actor_id, board_id, user_id, False)
    edit.implicit_follow(actor_id, user_id, False, 0).commit()  # explicit now
    feeds.merge_pinner(actor_id, user_id)


def unfollow_user(actor_id: int, user_id: int) -> None:
    store = get_store()
    store.mapping("user_follows_users").remove(actor_id, user_id)
    edit = get_graph().edit().user_follow(actor_id, user_id, False, 0)
    boards = boards_of(user_id)
    if boards:
        for board_id in store.mapping("user_unfollows_boards").filter(actor_id, boards):
            store.mapping("user_unfollows_boards").remove(actor_id, board_id)
            edit.board_unfollow(actor_id, board_id, user_id, False)
    edit.commit()
    feeds.drop_pinner(actor_id, user_id)


def follow_board(actor_id: int, board_id: int) -> None:
    board = get_board(board_id)
    if board is None:
        raise NotFoundError("no such board")
    owner = board["owner_id"]
    if owner == actor_id:
        raise InvalidField("you cannot follow your own board", field="board_id")
    store, sequence = get_store(), now_sequence()
    edit = get_graph().edit()
    if store.mapping("user_follows_users").contains(actor_id, owner):
        store.mapping("user_unfollows_boards").remove(actor_id, board_id)
        edit.board_unfollow(actor_id, board_id, owner, False)
    elif store.mapping("user_follows_boards").add(actor_id, board_id, sequence=sequence):
        edit.board_follow(actor_id, board_id, owner, True, sequence)
        if not _follows_other_boards(actor_id, owner, board_id):  # the first: now implicit
            edit.implicit_follow(actor_id, owner, True, sequence)
    edit.commit()
    feeds.merge_board(actor_id, board_id)


def unfollow_board(actor_id: int, board_id: int) -> None:
    board = get_board(board_id)
    if board is None:
        raise NotFoundError("no such board")
    owner = board["owner_id"]
    store = get_store()
    edit = get_graph().edit()
    if store.mapping("user_follows_users").contains(actor_id, owner):
        store.mapping("user_unfollows_boards").add(actor_id, board_id)
        edit.board_unfollow(actor_id, board_id, owner, True)
    elif store.mapping("user_follows_boards").remove(actor_id, board_id):
        edit.board_follow(actor_id, board_id, owner, False, 0)
        if not _follows_other_boards(actor_id, owner, board_id):
            edit.implicit_follow(actor_id, owner, False, 0)
    edit.commit()
    feeds.drop_board(actor_id, board_id)


def _follows_other_boards(actor_id: int, owner: int, board_id: int) -> bool:
    others = [b for b in boards_of(owner) if b != board_id]
    return bool(others and get_store().mapping("user_follows_boards").filter(actor_id, others))
