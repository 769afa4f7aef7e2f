"""A new object's moment, as its ``created_at`` and as the sequence of the mapping rows that
list it: one instant in both, so a create finished again later (a retried request with its
idempotency key, ``api/idempotency.py``) lists the object where its first attempt would
have, and a feed or a notification that already holds it is not given it twice."""

from __future__ import annotations

import calendar
from datetime import UTC, datetime

from shardstore.mappings import now_sequence

MICROSECONDS = 1_000_000


def now() -> tuple[int, str]:
    """The sequence (microseconds since the epoch) and the ``created_at`` of this moment."""
    sequence = now_sequence()
    seconds, micro = divmod(sequence, MICROSECONDS)
    return sequence, datetime.fromtimestamp(seconds, UTC).replace(microsecond=micro).isoformat()


def sequence_of(created_at: str) -> int:
    """The sequence of the moment ``created_at`` names (exact: no float on the way)."""
    moment = datetime.fromisoformat(created_at)
    if moment.tzinfo is None:  # stored times are UTC
        moment = moment.replace(tzinfo=UTC)
    return calendar.timegm(moment.utctimetuple()) * MICROSECONDS + moment.microsecond
