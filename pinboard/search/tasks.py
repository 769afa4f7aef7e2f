"""Keeping the index current: a task per object an action changed, queued after the write.

Each task reads the object as it is when the task runs and stores its document, or
forgets it if the object is gone: so a task delivered twice, late, or out of order
with another for the same object leaves the index as the store is. The actions queue
``index_pin`` on a pin's create, save, edit and delete; ``index_board`` on a board's
create, edit and delete (with its pins when its name, which they are found by,
changed); ``index_user`` on sign-up, a profile's edit and an account's deletion. A
board made secret or public again has its pins re-indexed by
``boards.tasks.sync_board_privacy``, which already walks them (``index_board_pins``).
"""

from __future__ import annotations

from collections.abc import Iterable

from shardstore.mappings import pages_of

from ..boards.queries import get_board
from ..data_plane import cached_store
from ..entities import Board
from ..ledger import TRANSIENT_ERRORS, ledgered_task
from ..pins.queries import get_pin, get_pins
from ..users.queries import get_user
from .documents import board_document, pin_document, user_document
from .index import IndexUnavailable
from .plane import search_index

RETRY_ON = (*TRANSIENT_ERRORS, IndexUnavailable)
BATCH = 500


@ledgered_task(retry_on=RETRY_ON)
def index_pin(pin_id: int) -> None:
    """Store the pin's document, or forget the pin if it (or its board) is gone."""
    pin = get_pin(pin_id)
    board = get_board(pin["board_id"]) if pin is not None else None
    if pin is None or board is None:
        search_index().delete("pin", [pin_id])
    else:
        search_index().upsert([pin_document(pin, board)])


@ledgered_task(retry_on=RETRY_ON)
def index_board(board_id: int, *, with_pins: bool = False) -> None:
    """Store the board's document (and with ``with_pins`` its pins'), or forget the board
    if it is gone (its pins are forgotten by their own tasks, as they are deleted)."""
    board = get_board(board_id)
    if board is None:
        search_index().delete("board", [board_id])
        return
    search_index().upsert([board_document(board)])
    if with_pins:
        for pin_ids in pages_of(cached_store().mapping("board_has_pins"), board_id, batch=BATCH):
            index_board_pins(board, pin_ids)


def index_board_pins(board: Board, pin_ids: Iterable[int]) -> None:
    """Store the documents of these pins of ``board`` as the board is now (its name, its
    secrecy); pins deleted or moved meanwhile are their own tasks' to forget or store."""
    pins = get_pins(list(pin_ids))
    documents = [pin_document(pin, board) for pin in pins if pin["board_id"] == board["id"]]
    search_index().upsert(documents)


@ledgered_task(retry_on=RETRY_ON)
def index_user(user_id: int) -> None:
    """Store the pinner's document, or forget them if their account is gone."""
    user = get_user(user_id, counts=False)
    if user is None:
        search_index().delete("user", [user_id])
    else:
        search_index().upsert([user_document(user)])
