"""Fan-out on write: a new pin goes to every follower of its board, ~1,000 per batch.

``fan_out_pin`` streams the board's followers from the Redis graph and queues
one ``fan_out_batch`` per chunk; each batch is one script call per Redis
instance (claim, then LPUSH + LTRIM per active follower), so a retried batch
adds nothing twice. Both are acks_late and reject_on_worker_lost (a worker that
dies mid-task leaves it queued, and it is delivered again: see the broker's
visibility timeout in settings) and retry with backoff on Redis and MySQL errors.
"""

from __future__ import annotations

import redis
from celery import shared_task

from shardstore import ShardUnavailable, WriteConflict

from ..store import get_feeds, get_graph, get_store

BATCH = 1000
RETRY_ON = (redis.RedisError, ShardUnavailable, WriteConflict)
RETRY = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": RETRY_ON,
    "retry_backoff": True,
    "retry_jitter": True,
    "max_retries": 10,
}


@shared_task(**RETRY)
def fan_out_pin(pin_id: int, sequence: int) -> int:
    """Queue the batches of a pin's fan-out; returns how many."""
    pin = get_store().objects("pin").get(pin_id)
    if pin is None:  # deleted before its fan-out ran
        return 0
    fan_out_batch.delay(pin_id, sequence, "owner", [pin["owner_id"]])
    batches = 0
    for batches, followers in enumerate(
        get_graph().board_followers(pin["board_id"], pin["owner_id"], chunk=BATCH), 1
    ):
        fan_out_batch.delay(pin_id, sequence, str(batches), followers)
    return batches


@shared_task(**RETRY)
def fan_out_batch(pin_id: int, sequence: int, batch: str, user_ids: list[int]) -> int:
    """Push one pin to up to ~1,000 feeds; returns how many got it."""
    return get_feeds().push(pin_id, sequence, user_ids, batch=batch)
