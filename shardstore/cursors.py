"""Opaque paging cursors for mapping lists.

A cursor is the position of the last row a page returned, ``(sequence, to_id)``,
so the next page starts strictly after it however many rows were added since.
"""

from __future__ import annotations

import base64
import binascii

from .exceptions import InvalidCursor


def encode(sequence: int, to_id: int) -> str:
    raw = f"{sequence}:{to_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(cursor: str) -> tuple[int, int]:
    """The (sequence, to_id) a cursor stands for; InvalidCursor if it is not one of ours."""
    if not isinstance(cursor, str) or not 0 < len(cursor) <= 64:
        raise InvalidCursor("cursor must be a short string")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        sequence_text, to_text = raw.split(":")
        sequence, to_id = int(sequence_text), int(to_text)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidCursor(f"cursor {cursor!r} is not valid") from None
    if not (0 <= to_id < 1 << 62 and -(1 << 63) <= sequence < 1 << 63):
        raise InvalidCursor(f"cursor {cursor!r} is out of range")
    return sequence, to_id
