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

from collections.abc import Callable

from shardstore.mappings import now_sequence
from social.feed_sync import FeedReport, sync_feeds
from social.graph_sync import SyncReport, sync_graph

from ..boards.privacy import followable_board, visible_board
from ..boards.queries import all_board_ids
from ..data_plane import cached_store, get_feeds, get_graph
from ..entities import Board
from ..errors import InvalidField, NotFoundError
from ..feeds import actions as feeds
from ..notifications.actions import announce
from ..notifications.kinds import BOARD_FOLLOW, FOLLOW
from ..users.queries import get_user


def follow_user(actor_id: int, user_id: int) -> None:
    if actor_id == user_id:
        raise InvalidField("you cannot follow yourself", field="user_id")
    if get_user(user_id, counts=False) is None:
        raise NotFoundError("no such user")
    store, sequence, edit = cached_store(), now_sequence(), get_graph().edit()
    followed = store.mapping("user_follows_users").add(actor_id, user_id, sequence=sequence)
    if followed:
        edit.user_follow(
            actor_id, user_id, on=True, score=sequence
        )  # Redis scores = MySQL sequences
    boards = all_board_ids(user_id)
    if boards:
        for board_id in store.mapping("user_follows_boards").filter(actor_id, boards):
            store.mapping("user_follows_boards").remove(actor_id, board_id)
            edit.board_follow(actor_id, board_id, user_id, on=False, score=0)
        for board_id in store.mapping("user_unfollows_boards").filter(actor_id, boards):
            store.mapping("user_unfollows_boards").remove(actor_id, board_id)
            edit.board_unfollow(actor_id, board_id, user_id, on=False)
    edit.implicit_follow(actor_id, user_id, on=False, score=0).commit()  # explicit now
    feeds.merge_pinner(actor_id, user_id)
    if followed:
        announce(user_id, FOLLOW, actor_id, user_id, sequence)


def unfollow_user(actor_id: int, user_id: int) -> None:
    store = cached_store()
    store.mapping("user_follows_users").remove(actor_id, user_id)
    edit = get_graph().edit().user_follow(actor_id, user_id, on=False, score=0)
    boards = all_board_ids(user_id)
    if boards:
        for board_id in store.mapping("user_unfollows_boards").filter(actor_id, boards):
            store.mapping("user_unfollows_boards").remove(actor_id, board_id)
            edit.board_unfollow(actor_id, board_id, user_id, on=False)
    edit.commit()
    feeds.drop_pinner(actor_id, user_id)


def follow_board(actor_id: int, board_id: int) -> None:
    board = followable_board(actor_id, board_id)
    owner = board["owner_id"]
    if owner == actor_id:
        raise InvalidField("you cannot follow your own board", field="board_id")
    store, sequence = cached_store(), now_sequence()
    edit = get_graph().edit()
    followed = False  # newly: one who follows the owner followed the board already
    if store.mapping("user_follows_users").contains(actor_id, owner):
        store.mapping("user_unfollows_boards").remove(actor_id, board_id)
        edit.board_unfollow(actor_id, board_id, owner, on=False)
    elif store.mapping("user_follows_boards").add(actor_id, board_id, sequence=sequence):
        followed = True
        edit.board_follow(actor_id, board_id, owner, on=True, score=sequence)
        if not _follows_other_boards(actor_id, owner, board_id):  # the first: now implicit
            edit.implicit_follow(actor_id, owner, on=True, score=sequence)
    edit.commit()
    feeds.merge_board(actor_id, board_id)
    if followed:
        announce(owner, BOARD_FOLLOW, actor_id, board_id, sequence)


def unfollow_board(actor_id: int, board_id: int) -> None:
    """A pinner unfollows a board they may see (another's secret board: no such board)."""
    end_board_follow(actor_id, visible_board(actor_id, board_id))


def end_board_follow(actor_id: int, board: Board) -> None:
    """Unfollow ``board``, whether ``actor_id`` may see it or not (a deleted account's purge
    ends follows of boards made secret since)."""
    board_id, owner = board["id"], board["owner_id"]
    store = cached_store()
    edit = get_graph().edit()
    if store.mapping("user_follows_users").contains(actor_id, owner):
        store.mapping("user_unfollows_boards").add(actor_id, board_id)
        edit.board_unfollow(actor_id, board_id, owner, on=True)
    elif store.mapping("user_follows_boards").remove(actor_id, board_id):
        edit.board_follow(actor_id, board_id, owner, on=False, score=0)
        if not _follows_other_boards(actor_id, owner, board_id):
            edit.implicit_follow(actor_id, owner, on=False, score=0)
    edit.commit()
    feeds.drop_board(actor_id, board_id)


def _follows_other_boards(actor_id: int, owner: int, board_id: int) -> bool:
    others = [b for b in all_board_ids(owner) if b != board_id]
    return bool(others and cached_store().mapping("user_follows_boards").filter(actor_id, others))


Progress = Callable[[int, int], None]  # (shards done, shards in all)


def sync_redis(
    *, repair: bool, wipe: bool, graph_progress: Progress | None = None,
    feeds_progress: Progress | None = None,
) -> tuple[SyncReport, FeedReport]:  # fmt: skip
    """The Redis follower graph, then the home feeds, checked against MySQL: repaired with
    ``repair``; rebuilt from nothing with ``wipe`` (which also writes every pinner's feed,
    not only active pinners' that differ)."""
    store = cached_store().store
    graph = sync_graph(store, get_graph(), repair=repair, wipe=wipe, progress=graph_progress)
    feeds = sync_feeds(store, get_feeds(), repair=repair, everyone=wipe, progress=feeds_progress)
    return graph, feeds
