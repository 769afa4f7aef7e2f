"""Who may see what, and where a pin goes: the one place that reads a board's ``secret``
flag and a save's ``saved_from_secret`` (``tests/test_layout.py`` checks that nothing
else does). The pages, the API, the fan-out and the rebuilds from MySQL all ask here, so
a page and the feed that leads to it cannot disagree.

A board is its owner's, shared with the collaborators the owner invites (a group board).
A secret board is seen by its members alone, and by the pinners invited to it (to decide):
to anyone else it and its pins do not exist. An invitee who has not accepted sees it and
does nothing else: no save, like or comment on its pins, no follow. What leaves a secret
board stays where its owner decides who sees it: its pins are saved by its owner anywhere
(they may make the board public anyway) and by its collaborators only to the owner's
secret boards (``may_copy_to``); its images are not pinned from their addresses (the
site's fetch refuses them). Its pins reach no home feed and not the
site's newest pins; a save of one of its pins does not show where it came from, and a
like of one is left out of its liker's count. Saves reach followers' feeds but not the
newest pins: they show an image the site has shown already.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, TypedDict

#: The fields these rules read: a board's flag, and a save's copy of its source's flag
#: (set by the save, kept in line by the source board's privacy task).
_SECRET = "secret"
_SAVED_FROM_SECRET: Final = "saved_from_secret"


def is_secret(board: Mapping[str, Any]) -> bool:
    return bool(board.get(_SECRET))


def secret_flag(secret: bool) -> dict[str, bool]:
    """The board fields that make it secret, or public (a create's or an edit's)."""
    return {_SECRET: secret}


def is_member(user_id: int | None, board: Mapping[str, Any]) -> bool:
    """Its owner or one of its collaborators."""
    return user_id is not None and (
        user_id == board["owner_id"] or user_id in board.get("collaborators", ())
    )


def is_invited(user_id: int | None, board: Mapping[str, Any]) -> bool:
    return user_id is not None and user_id in board.get("invited", ())


def may_see(viewer_id: int | None, board: Mapping[str, Any]) -> bool:
    """A public board, or one the viewer is a member of or invited to (to decide)."""
    return not is_secret(board) or is_member(viewer_id, board) or is_invited(viewer_id, board)


def may_act_on(user_id: int | None, board: Mapping[str, Any]) -> bool:
    """Whether a pinner may do more than look at a board: save, like or comment on its pins,
    follow it. A public board's, or a secret one's members'; not an invitee's, who sees it
    only to decide."""
    return not is_secret(board) or is_member(user_id, board)


def may_copy_to(actor_id: int, source_board: Mapping[str, Any], board: Mapping[str, Any]) -> bool:
    """Whether a pin of ``source_board`` may be saved to ``board`` (one ``actor_id`` may pin
    to): a public board's anywhere; a secret one's by its owner anywhere, who may make it
    public anyway, and by anyone else only to that owner's secret boards. A copy a member
    kept on a board of their own would outlive their membership, beyond its owner's reach,
    and go public with that board."""
    if not is_secret(source_board) or actor_id == source_board["owner_id"]:
        return True
    return is_secret(board) and board["owner_id"] == source_board["owner_id"]


def is_save(pin: Mapping[str, Any]) -> bool:
    return bool(pin.get("saved_from"))


def reaches_followers(board: Mapping[str, Any]) -> bool:
    """Whether a pin of this board goes to its followers' home feeds (and its pinner's)."""
    return not is_secret(board)


def reaches_newest(pin: Mapping[str, Any], board: Mapping[str, Any]) -> bool:
    """Whether a pin goes among the site's newest pins: a public board's, not a save."""
    return reaches_followers(board) and not is_save(pin)


def announces_save(board: Mapping[str, Any]) -> bool:
    """Whether a save to this board tells the source pin's pinner (a secret one tells no one)."""
    return not is_secret(board)


class SaveFields(TypedDict):
    saved_from: int
    saved_from_secret: bool


def save_fields(source_id: int, source_board: Mapping[str, Any]) -> SaveFields:
    """The fields of a save of pin ``source_id``, which is on ``source_board``."""
    return {"saved_from": source_id, _SAVED_FROM_SECRET: is_secret(source_board)}


def saved_from_flag(secret: bool) -> dict[str, bool]:
    """A save's fields once its source's board is made secret, or public."""
    return {_SAVED_FROM_SECRET: secret}


def saved_from_secret(pin: Mapping[str, Any]) -> bool:
    """Whether a save's source is on a secret board."""
    return bool(pin.get(_SAVED_FROM_SECRET))


def shown_saved_from(pin: Mapping[str, Any]) -> int | None:
    """The pin a save was saved from, unless that pin's board is secret: its ID is not
    shown, to anyone."""
    return None if saved_from_secret(pin) else pin.get("saved_from")


def board_list(secret: bool) -> str:
    """The owner's list that holds a board: its public boards, or its secret ones."""
    return "user_has_secret_boards" if secret else "user_has_boards"


def pin_list(secret: bool) -> str:
    """The pinner's list that holds a pin: the board's secrecy decides."""
    return "user_has_secret_pins" if secret else "user_has_pins"


def board_list_of(board: Mapping[str, Any]) -> str:
    return board_list(is_secret(board))


def pin_list_on(board: Mapping[str, Any]) -> str:
    """The list of its pinner's that holds a pin on ``board``."""
    return pin_list(is_secret(board))
