"""Who may see a board and its pins, and who may change them.

A board is its owner's, shared with the collaborators the owner invites (a group board:
they pin to it too). A secret board is seen by those alone: to anyone else it and its
pins do not exist, so every route answers as for a missing one (404, never 403, which
would say that they exist).

The board object decides, at every read, by the rules of ``social.rules``: its flag, its
``collaborators`` and the pinners ``invited`` to be (the IDs, kept in the object so that
this check costs no query: an invitee sees the board, to decide, and nothing more until
they accept: ``actionable_pin``). What a member may copy out of a secret board is
``savable_to``'s. Lists built ahead (home feeds, the newest pins, a pinner's likes) may
still hold a pin whose board became secret a moment ago, until the board's privacy task
has run (``boards.tasks``), and are filtered here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from social.rules import is_member, is_secret, may_act_on, may_copy_to, may_see

from ..entities import Board, Pin
from ..errors import Forbidden, NotFoundError
from ..pins.queries import get_pin
from .queries import get_board, get_boards


def visible_board(viewer_id: int | None, board_id: int) -> Board:
    """The board, if the viewer may see it; NotFoundError otherwise."""
    return shown_board(viewer_id, get_board(board_id))


def shown_board(viewer_id: int | None, board: Board | None) -> Board:
    """``visible_board`` of a board read already (None: there is none)."""
    if board is None or not may_see(viewer_id, board):
        raise NotFoundError("no such board")
    return board


def owned_board(actor_id: int, board_id: int) -> Board:
    """The board, if ``actor_id`` owns it; NotFoundError or Forbidden otherwise."""
    board = visible_board(actor_id, board_id)
    if board["owner_id"] != actor_id:
        raise Forbidden("this board is not yours")
    return board


def pinnable_board(actor_id: int, board_id: int) -> Board:
    """The board, if ``actor_id`` may pin to it (its owner or a collaborator)."""
    board = visible_board(actor_id, board_id)
    if not is_member(actor_id, board):
        raise Forbidden("you can pin only to your boards and those you collaborate on")
    return board


def followable_board(actor_id: int, board_id: int) -> Board:
    """The board, if ``actor_id`` may follow it: NotFoundError if they may not see it,
    Forbidden if they see it only to decide on an invitation."""
    board = visible_board(actor_id, board_id)
    _may_act(actor_id, board)
    return board


def _may_act(actor_id: int, board: Board) -> None:
    if not may_act_on(actor_id, board):
        raise Forbidden("accept the invitation to this board first")


def editable_pin(actor_id: int, pin_id: int) -> tuple[Pin, Board]:
    """The pin and its board, if ``actor_id`` may edit the pin: its pinner, while they may
    still pin to its board (a removed collaborator's pins stay, theirs no longer)."""
    pin, board = visible_pin(actor_id, pin_id)
    if pin["owner_id"] != actor_id or not is_member(actor_id, board):
        raise Forbidden("only its pinner can edit a pin, while they may pin to its board")
    return pin, board


def deletable_pin(actor_id: int, pin_id: int) -> Pin:
    """The pin, if ``actor_id`` may delete it: its pinner, or its board's owner."""
    pin, board = visible_pin(actor_id, pin_id)
    if actor_id not in (pin["owner_id"], board["owner_id"]):
        raise Forbidden("only its pinner or its board's owner can delete a pin")
    return pin


def movable_to(actor_id: int, board: Board, new_board_id: int) -> Board:
    """The board a pin of ``board`` may move to: one ``actor_id`` may pin to, of the same
    visibility, and, from a secret board, of the same owner. A pin's comments and likes go
    with it, so a move must not show them to anyone the first board hid them from."""
    new_board = pinnable_board(actor_id, new_board_id)
    secret = is_secret(board)
    if is_secret(new_board) != secret:
        raise Forbidden("a pin moves only to a board as secret as its own")
    if secret and new_board["owner_id"] != board["owner_id"]:
        raise Forbidden("a pin on a secret board moves only to its owner's secret boards")
    return new_board


def savable_to(actor_id: int, source_board: Board, board_id: int) -> Board:
    """The board a pin of ``source_board`` may be saved to: one ``actor_id`` may pin to,
    where the copy stays as secret as its source (``social.rules.may_copy_to``)."""
    board = pinnable_board(actor_id, board_id)
    if not may_copy_to(actor_id, source_board, board):
        raise Forbidden("a pin on a secret board is saved only to its owner's secret boards")
    return board


def visible_pin(viewer_id: int | None, pin_id: int) -> tuple[Pin, Board]:
    """The pin and its board, if the viewer may see them; NotFoundError otherwise."""
    pin = get_pin(pin_id)
    board = get_board(pin["board_id"]) if pin else None
    return shown_pin(viewer_id, pin, board)


def shown_pin(viewer_id: int | None, pin: Pin | None, board: Board | None) -> tuple[Pin, Board]:
    """``visible_pin`` of a pin and its board read already (None: there is none)."""
    if pin is None or board is None or not may_see(viewer_id, board):
        raise NotFoundError("no such pin")
    return pin, board


def actionable_pin(actor_id: int, pin_id: int) -> tuple[Pin, Board]:
    """The pin and its board, if ``actor_id`` may save, like or comment on it: NotFoundError
    if they may not see it, Forbidden if they see it only to decide on an invitation."""
    pin, board = visible_pin(actor_id, pin_id)
    _may_act(actor_id, board)
    return pin, board


class ShownPins(NamedTuple):
    """The pins of a list that a viewer may see, and their boards by ID (which a grid's
    cards name: ``pins.queries.pinners_and_boards`` takes them as known)."""

    pins: list[Pin]
    boards: dict[int, Board]


def visible_pins(viewer_id: int | None, pins: list[Pin], read: Iterable[Board] = ()) -> ShownPins:
    """The pins the viewer may see, in order: one multi-get of their boards, less those
    ``read`` already (a feed reads the boards its entries name with the pins; a pin moved
    since is checked against the board it is on)."""
    boards = {board["id"]: board for board in read}
    missing = sorted({pin["board_id"] for pin in pins} - boards.keys())
    if missing:
        boards.update((board["id"], board) for board in get_boards(missing, counts=False))
    shown = {
        board_id: board
        for board_id in {pin["board_id"] for pin in pins}
        if (board := boards.get(board_id)) is not None and may_see(viewer_id, board)
    }
    return ShownPins([pin for pin in pins if pin["board_id"] in shown], shown)
