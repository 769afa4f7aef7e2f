"""Keyset pages over (created_at, id): what a list endpoint reads, and its ``next`` cursor.

A page is one indexed range read of ``limit + 1`` rows, however deep it is, where OFFSET
would read and drop every row before it. The cursor is the last row's position,
``<created_at in microseconds>:<id>`` in URL-safe base64, so a page starts strictly after
it however many rows were added since.
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from django.db.models import Model, Q, QuerySet

M = TypeVar("M", bound=Model)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class InvalidCursor(ValueError):
    """A cursor this build did not hand out."""


def encode(created_at: datetime, row_id: int) -> str:
    micros = (created_at - _EPOCH) // timedelta(microseconds=1)
    return base64.urlsafe_b64encode(f"{micros}:{row_id}".encode()).decode().rstrip("=")


def decode(cursor: str) -> tuple[datetime, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        micros, row_id = (int(part) for part in raw.split(":"))
        return _EPOCH + timedelta(microseconds=micros), row_id
    except (binascii.Error, UnicodeDecodeError, ValueError, OverflowError):
        raise InvalidCursor(cursor) from None


def keyset_page(
    rows: QuerySet[M], *, limit: int, cursor: str | None, newest_first: bool = True
) -> tuple[list[M], str | None]:
    """``limit`` rows of ``rows`` after ``cursor`` (newest first unless told otherwise), and
    the cursor of the next page, or None on the last one."""
    direction = "-" if newest_first else ""
    if cursor is not None:
        created_at, row_id = decode(cursor)
        beyond = "lt" if newest_first else "gt"
        rows = rows.filter(
            Q(**{f"created_at__{beyond}": created_at})
            | Q(created_at=created_at, **{f"id__{beyond}": row_id})
        )
    found = list(rows.order_by(f"{direction}created_at", f"{direction}id")[: limit + 1])
    if len(found) <= limit:
        return found, None
    last = found[limit - 1]
    return found[:limit], encode(last.created_at, last.pk)
