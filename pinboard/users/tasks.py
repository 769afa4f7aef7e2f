"""Purging a deleted account: what ``delete_account`` leaves to a task.

The account itself goes at once (the user object is soft-deleted, its tokens revoked,
its sessions end with it); its username and email stay taken, by the deleted object's
lookups. ``purge_account`` then removes what the pinner made and every edge to or
from them, through the same actions a pinner would use, so the follower graph and
home feeds follow as they always do: their boards (with their pins and the follows of
them), the group boards they joined (and their pins there), whom they follow and who
follows them, the boards they follow or unfollowed, their comments on anyone's pins,
their likes, and their own feed and notifications. Each step takes what is still listed, so a purge cut short and run again
finishes the job; it is acks_late and retried like the other tasks. Last, the files of
the pinner's avatar go.

``release_avatar`` deletes the files of an avatar the pinner replaced or removed.
"""

from __future__ import annotations

from typing import cast

from shardstore.mappings import pages_of
from social.rules import pin_list

from ..boards.actions import delete_board
from ..boards.collaborators import drop_collaborator
from ..boards.queries import get_board, own_board_ids
from ..data_plane import cached_store, get_feeds, get_notifications
from ..entities import Avatar, User
from ..errors import NotFoundError
from ..follows.actions import end_board_follow, unfollow_user
from ..ledger import ledgered_task
from ..likes.actions import unlike
from ..pins.actions import delete_comments_of_account, delete_pin_of_account
from ..pins.tasks import RETRY_ON as PURGE_RETRY_ON
from .avatars import delete_avatar

BATCH = 500


@ledgered_task(retry_on=PURGE_RETRY_ON)  # it purges pins, and their image files
def purge_account(user_id: int) -> None:
    """Remove a deleted account's boards, pins, follows, comments, likes and feed."""
    store = cached_store()
    user = cast("User | None", store.objects("user").get(user_id, include_inactive=True))
    if user is None or user.get("active", True) is not False:  # gone, or not deleted
        return
    # Those who follow the pinner first: that forgets their unfollows of the pinner's boards.
    for followers in pages_of(store.mapping("user_followed_by_users"), user_id, batch=BATCH):
        for other in followers:
            unfollow_user(other, user_id)
    for board_id in own_board_ids(user_id):
        followers_of_board = store.mapping("board_followed_by_users")
        board = get_board(board_id)
        for followers in pages_of(followers_of_board, board_id, batch=BATCH):
            for other in followers:
                if board is not None:  # a secret one's followers too, who see it no more
                    end_board_follow(other, board)
        delete_board(user_id, board_id)
    for followed in pages_of(store.mapping("user_follows_users"), user_id, batch=BATCH):
        for other in followed:
            unfollow_user(user_id, other)
    board_follows = store.mapping("user_follows_boards")
    for board_ids in pages_of(board_follows, user_id, batch=BATCH):
        for board_id in board_ids:
            board = get_board(board_id)
            if board is None:  # a deleted board: only the edge is left
                board_follows.remove(user_id, board_id)
            else:  # a board made secret since too
                end_board_follow(user_id, board)
    # Board unfollows are kept only while their owner is followed: unfollowing every
    # pinner above forgot them, but for boards deleted since.
    board_unfollows = store.mapping("user_unfollows_boards")
    for board_ids in pages_of(board_unfollows, user_id, batch=BATCH):
        for board_id in board_ids:
            board_unfollows.remove(user_id, board_id)
    # Group boards of others: the pinner leaves them, and their pins there go.
    collaborations = store.mapping("user_collaborates_on_boards")
    for board_ids in pages_of(collaborations, user_id, batch=BATCH):
        for board_id in board_ids:
            drop_collaborator(board_id, user_id)
    for relation in (pin_list(secret=False), pin_list(secret=True)):
        for pin_ids in pages_of(store.mapping(relation), user_id, batch=BATCH):
            for pin_id in pin_ids:
                try:
                    delete_pin_of_account(user_id, pin_id)
                except NotFoundError:  # deleted already: only the edge is left
                    store.mapping(relation).remove(user_id, pin_id)
    for comment_ids in pages_of(store.mapping("user_has_comments"), user_id, batch=BATCH):
        delete_comments_of_account(user_id, comment_ids)
    for pin_ids in pages_of(store.mapping("user_likes_pins"), user_id, batch=BATCH):
        for pin_id in pin_ids:
            unlike(user_id, pin_id)
    get_feeds().replace(user_id, [])
    get_notifications().clear(user_id)
    if user.get("avatar"):  # the object stays (its names stay taken); its files need not
        delete_avatar(user["avatar"])


@ledgered_task(retry_on=PURGE_RETRY_ON)
def release_avatar(avatar: Avatar) -> None:
    """Delete the files of an avatar no user object names any more (replaced or removed)."""
    delete_avatar(avatar)
