"""Writes to notifications: announce an event to the pinner it concerns, forget what was
deleted, mark read.

The actions of other apps (likes, pins, follows) call ``announce`` after their write to
MySQL, with the sequence of the mapping row they wrote: the entry's time is the row's,
so a rebuild from MySQL (``rebuild.py``) gives back the same entries. Nobody is told of
what they did themselves.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..data_plane import get_notifications
from . import tasks


def announce(user_id: int, kind: str, actor_id: int, object_id: int, sequence: int) -> None:
    """Tell ``user_id`` that ``actor_id`` did ``kind`` to ``object_id`` (Celery)."""
    if user_id != actor_id:
        tasks.deliver.delay(user_id, kind, actor_id, object_id, sequence)


def forget(user_id: int, object_ids: Iterable[int]) -> None:
    """Drop ``user_id``'s entries naming these deleted objects, so none is counted unread
    (Celery; a read leaves them out anyway)."""
    tasks.forget.delay(user_id, [int(i) for i in object_ids])


def mark_read(user_id: int, up_to: int | None = None) -> None:
    """Mark the pinner's notifications read up to the sequence ``up_to`` (default: all)."""
    get_notifications().mark_read(user_id, up_to)
