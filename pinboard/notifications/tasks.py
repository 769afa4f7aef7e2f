"""Delivering notifications: one task per event, queued by the action after its write.

Like the home feeds' fan-out (pinboard/feeds/tasks.py), each task is ledgered, acks_late
and retried on Redis and MySQL errors, and idempotent: a delivery is one ``ZADD GT`` of
an entry that is the same bytes every time, and forgetting what is gone already is
nothing.
"""

from __future__ import annotations

from social.notifications import Entry

from ..data_plane import get_notifications
from ..ledger import TRANSIENT_ERRORS, ledgered_task


@ledgered_task(retry_on=TRANSIENT_ERRORS, reject_on_worker_lost=True)
def deliver(user_id: int, kind: str, actor_id: int, object_id: int, sequence: int) -> None:
    """Put one entry in the pinner's notifications."""
    get_notifications().add(user_id, Entry(sequence, kind, actor_id, object_id))


@ledgered_task(retry_on=TRANSIENT_ERRORS, reject_on_worker_lost=True)
def forget(user_id: int, object_ids: list[int]) -> int:
    """Drop the pinner's entries that name these objects (deleted); returns how many."""
    return get_notifications().forget(user_id, object_ids)
