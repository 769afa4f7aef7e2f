"""A board made secret, or public again: what follows the flag (``actions.update_board``).

``sync_board_privacy`` brings everything built ahead in line with the board's flag *as it
is when the task runs* (so a task delivered twice, or after the flag changed back, does
the right thing): the board's pins move to their pinners' secret or public pins lists with
their sequences, and the home feeds of the board's followers drop them or merge them in,
a batch of followers per task. A secret board's pins also leave the site's newest pins;
made public again, they are not put back there (they are not new). The search index
takes the board's and its pins' new secrecy too (``search.tasks``), the pins' saves show
where they came from, or not (``social.rules.shown_saved_from``), the pins' image files
move under private keys, or back (``pins.image_privacy``), and their likes leave their
likers' counts, or join them (``likes.actions.follow_board``).
"""

from __future__ import annotations

import contextlib
from typing import cast

from shardstore import NotFound
from shardstore.mappings import pages_of
from social.rules import is_secret, pin_list, saved_from_flag, saved_from_secret

from ..data_plane import cached_store, get_feeds, get_graph
from ..entities import Board
from ..feeds.actions import drop_board, merge_board, rebuild
from ..ledger import TRANSIENT_ERRORS, ledgered_task
from ..likes import actions as likes
from ..pins import image_privacy
from ..pins.queries import get_pins
from ..s3_images import STORAGE_ERRORS
from ..search.index import IndexUnavailable
from ..search.tasks import index_board, index_board_pins

BATCH = 1000


@ledgered_task(retry_on=(*TRANSIENT_ERRORS, *STORAGE_ERRORS, IndexUnavailable))
def sync_board_privacy(board_id: int) -> int:
    """Move the board's pins to the owner's list its flag names, index them again, and
    queue the followers' feeds and the board's own document; returns how many follower
    batches were queued."""
    store = cached_store()
    board = cast("Board | None", store.objects("board").get(board_id))
    if board is None:  # deleted meanwhile: its pins went with it
        return 0
    secret, owner = is_secret(board), board["owner_id"]
    to_list, from_list = store.mapping(pin_list(secret)), store.mapping(pin_list(not secret))
    cursor = None
    while True:
        rows, cursor = store.mapping("board_has_pins").rows_page(
            board_id, limit=BATCH, cursor=cursor
        )
        pins = get_pins([pin_id for pin_id, _ in rows], counts=False)
        pinners = {pin["id"]: pin["owner_id"] for pin in pins}  # a group board's: several
        for pin in pins:
            image_privacy.follow_board(pin, secret)
            likes.follow_board(pin["id"], secret)
        for pin_id, sequence in rows:
            pinner = pinners.get(pin_id)
            if pinner is not None:  # else deleted: off every list already
                to_list.add(pinner, pin_id, sequence=sequence)
                from_list.remove(pinner, pin_id)
                _mark_saves(pin_id, secret)
        if secret:
            get_feeds().remove_recent(pin_id for pin_id, _ in rows)
        index_board_pins(board, [pin_id for pin_id, _ in rows])
        if cursor is None:
            break
    index_board.delay(board_id)
    for member in (owner, *board.get("collaborators", ())):  # their feeds hold their own
        rebuild(member)  # public pins: a few feeds, rebuilt whole from MySQL
    batches = 0
    for followers in get_graph().board_followers(board_id, owner, chunk=BATCH):
        sync_followers_feeds.delay(board_id, followers)
        batches += 1
    return batches


def _mark_saves(pin_id: int, secret: bool) -> None:
    """The saves of a pin whose board changed its flag show where they came from, or not
    (``social.rules.shown_saved_from``)."""
    pins = cached_store().objects("pin")
    for save_ids in pages_of(cached_store().mapping("pin_saved_as_pins"), pin_id, batch=BATCH):
        for save in pins.get_many(save_ids):
            if saved_from_secret(save) != secret:
                with contextlib.suppress(NotFound):  # deleted meanwhile
                    pins.update(save["id"], saved_from_flag(secret))


@ledgered_task(retry_on=TRANSIENT_ERRORS)
def sync_followers_feeds(board_id: int, user_ids: list[int]) -> None:
    """Drop a secret board's pins from these followers' feeds, or merge a public one's in."""
    board = cast("Board | None", cached_store().objects("board").get(board_id))
    if board is None:
        return
    for user_id in user_ids:
        if is_secret(board):
            drop_board(user_id, board_id)
        else:
            merge_board(user_id, board_id)
