"""Group boards: the owner invites pinners as collaborators, who pin to the board and see it
even when it is secret; the owner removes them, or a collaborator leaves.

An invitation asks first: the invitee is told (a notification) and accepts or declines.
Until they accept, the board is not on their profile and they cannot pin to it; they may
see it, to decide (its ``invited`` IDs, kept in the object as its collaborators are).

A board's collaborators are kept twice: as IDs in the board object (``collaborators``,
what ``privacy`` checks on every read, at no cost) and as the mapping
``board_has_collaborators`` with its inverse ``user_collaborates_on_boards`` (the boards a
pinner's profile lists). The object is written first: a crash in between leaves a
collaborator who may pin but whose profile does not list the board yet, and adding again
repairs it. Their pins stay on the board when they leave. The lists a board page and a
profile show are read here too.
"""

from __future__ import annotations

from typing import Any, cast

from shardstore import Page
from shardstore.cache import Read
from shardstore.mappings import now_sequence
from social.rules import may_see

from ..data_plane import cached_store
from ..entities import Board, User
from ..errors import Forbidden, InvalidField, NotFoundError
from ..notifications import actions as notifications
from ..notifications.kinds import INVITE
from ..users.queries import get_user, get_users
from .privacy import owned_board, visible_board
from .queries import get_board, get_boards

#: Collaborators of one board, at most (the board object carries their IDs).
MAX_COLLABORATORS = 50
#: The boards a pinner collaborates on that a profile shows, at most.
GROUP_BOARDS = 100


def invite(actor_id: int, board_id: int, user_id: int) -> Board:
    """The owner invites a pinner: a notification they accept or decline; until then the
    board is not on their profile and they cannot pin to it. Returns the board."""
    board = owned_board(actor_id, board_id)
    if user_id == actor_id:
        raise InvalidField("you own this board already", field="user_id")
    if get_user(user_id, counts=False) is None:
        raise NotFoundError("no such pinner")
    if user_id in board.get("collaborators", ()) or user_id in board.get("invited", ()):
        return board  # nothing new: no second notification

    def add(data: dict[str, Any]) -> None:
        invited = data.setdefault("invited", [])
        if user_id not in invited:
            if len(invited) + len(data.get("collaborators", ())) >= MAX_COLLABORATORS:
                raise InvalidField(
                    f"a board has at most {MAX_COLLABORATORS} collaborators", field="user_id"
                )
            invited.append(user_id)

    updated = cast("Board", cached_store().objects("board").update(board["id"], add))
    notifications.announce(user_id, INVITE, actor_id, board["id"], now_sequence())
    return updated


def accept_invitation(user_id: int, board_id: int) -> Board:
    """The invitee joins the board's collaborators; returns the board."""
    _invited_to(user_id, board_id)

    def join(data: dict[str, Any]) -> None:
        if user_id in data.get("invited", ()):
            data["invited"].remove(user_id)
            members = data.setdefault("collaborators", [])
            if user_id not in members:
                members.append(user_id)

    store = cached_store()
    updated = cast("Board", store.objects("board").update(board_id, join))
    store.mapping("board_has_collaborators").add(board_id, user_id)
    notifications.forget(user_id, [board_id])
    return updated


def decline_invitation(user_id: int, board_id: int) -> None:
    """The invitee says no: the invitation goes, and its notification with it."""
    _invited_to(user_id, board_id)
    _uninvite(board_id, user_id)
    notifications.forget(user_id, [board_id])


def _invited_to(user_id: int, board_id: int) -> Board:
    board = get_board(board_id)
    if board is None or user_id not in board.get("invited", ()):
        raise NotFoundError("no such invitation")  # as for a board one may not see
    return board


def _uninvite(board_id: int, user_id: int) -> None:
    def remove(data: dict[str, Any]) -> None:
        if user_id in data.get("invited", ()):
            data["invited"].remove(user_id)

    if get_board(board_id) is not None:
        cached_store().objects("board").update(board_id, remove)


def remove_collaborator(actor_id: int, board_id: int, user_id: int) -> None:
    """The owner removes a collaborator (or takes an invitation back), or a collaborator
    leaves."""
    board = visible_board(actor_id, board_id)
    if actor_id not in (board["owner_id"], user_id):
        raise Forbidden("only the board's owner can remove a collaborator")
    drop_collaborator(board["id"], user_id)
    if user_id in board.get("invited", ()):
        _uninvite(board["id"], user_id)
        notifications.forget(user_id, [board["id"]])


def drop_collaborator(board_id: int, user_id: int) -> None:
    """Off the board object and the mappings (also for a deleted board or account)."""
    store = cached_store()

    def remove(data: dict[str, Any]) -> None:
        if user_id in data.get("collaborators", ()):
            data["collaborators"].remove(user_id)

    if get_board(board_id) is not None:
        store.objects("board").update(board_id, remove)
    store.mapping("board_has_collaborators").remove(board_id, user_id)


# -- reads ----------------------------------------------------------------------------


def collaborators_of(board: Board) -> list[User]:
    """The board's collaborators (users, without counts), in the order they were added."""
    return get_users(list(board.get("collaborators", ())), counts=False)


def invitees_of(board: Board) -> list[User]:
    """The pinners invited to the board who have not answered yet."""
    invited = list(board.get("invited", ()))
    return get_users(invited, counts=False) if invited else []


def group_boards(user_id: int, viewer_id: int | None) -> list[Board]:
    """The boards ``user_id`` collaborates on that the viewer may see, newest first."""
    page = reading_group_board_ids(user_id).run()
    return [b for b in get_boards(page.ids) if may_see(viewer_id, b)]


def reading_group_board_ids(user_id: int) -> Read[Page]:
    """The IDs of the boards ``user_id`` collaborates on, newest first (a pinner
    collaborates on few: the first page of the list), as a read to make with others."""
    mapping = cached_store().mapping("user_collaborates_on_boards")
    return mapping.reading_page(user_id, limit=GROUP_BOARDS)
