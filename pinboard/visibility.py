"""Who may see what: the one place that decides whether a pinner may see a board, and so
the pins on it. Every reader that shows someone a board or pin they did not just ask for
by its address (notifications, for now) asks here, so a rule about hidden boards is
written once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shardstore.objects import is_active


def may_see(
    viewer_id: int | None,
    board: Mapping[str, Any] | None,
    pin: Mapping[str, Any] | None = None,
) -> bool:
    """Whether the pinner ``viewer_id`` (None: a visitor) may see ``board``, or ``pin`` on
    it. Gone objects are seen by nobody; every live board is public."""
    if board is None or not is_active(board):
        return False
    return pin is None or (is_active(pin) and pin.get("board_id") == board.get("id"))
