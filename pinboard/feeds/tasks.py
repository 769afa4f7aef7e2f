"""Fan-out on write: a new pin goes to every follower of its board, ~1,000 per batch,
and (unless it is a save) among the site's newest pins; a secret board's pin goes nowhere.

``fan_out_pin`` streams the board's followers from the Redis graph and queues
one ``fan_out_batch`` per chunk; each batch is one script call per Redis
instance (claim, then LPUSH + LTRIM per active follower), so a retried batch
adds nothing twice. A batch is named by the followers it holds, not by its
place: a ``fan_out_pin`` run again after it died half-way may chunk a changed
follower list differently, and a batch it makes anew must not find the claim of
another that held other followers. Both are acks_late and reject_on_worker_lost (a worker that
dies mid-task leaves it queued, and it is delivered again: see the broker's
visibility timeout in settings) and retry with backoff on Redis and MySQL errors.
"""

from __future__ import annotations

import hashlib
from typing import cast

from social.rules import reaches_followers, reaches_newest

from ..data_plane import cached_store, get_feeds, get_graph
from ..entities import Board, Pin
from ..ledger import TRANSIENT_ERRORS, ledgered_task
from ..metrics import fanout_written

BATCH = 1000


@ledgered_task(retry_on=TRANSIENT_ERRORS, reject_on_worker_lost=True)
def fan_out_pin(pin_id: int, sequence: int) -> int:
    """Queue the batches of a pin's fan-out; returns how many."""
    store = cached_store()
    pin = cast("Pin | None", store.objects("pin").get(pin_id))
    if pin is None:  # deleted before its fan-out ran
        return 0
    board = cast("Board | None", store.objects("board").get(pin["board_id"]))
    if board is None or not reaches_followers(board):
        return 0
    if reaches_newest(pin, board):
        get_feeds().add_recent(pin_id, sequence)
    fan_out_batch.delay(pin_id, sequence, "owner", [pin["owner_id"]], board["id"])
    batches = 0
    for followers in get_graph().board_followers(board["id"], board["owner_id"], chunk=BATCH):
        fan_out_batch.delay(pin_id, sequence, batch_name(followers), followers, board["id"])
        batches += 1
    return batches


def batch_name(user_ids: list[int]) -> str:
    """A batch's name: a digest of the followers it holds, in any order."""
    joined = ",".join(map(str, sorted(user_ids))).encode()
    return hashlib.blake2b(joined, digest_size=12).hexdigest()


@ledgered_task(retry_on=TRANSIENT_ERRORS, reject_on_worker_lost=True)
def fan_out_batch(
    pin_id: int, sequence: int, batch: str, user_ids: list[int], board_id: int = 0
) -> int:
    """Push one pin (of ``board_id``; 0, as batches queued before boards were named: not
    known) to up to ~1,000 feeds; returns how many got it."""
    pushed = get_feeds().push(pin_id, sequence, user_ids, batch=batch, board_id=board_id)
    fanout_written(sequence)
    return pushed
