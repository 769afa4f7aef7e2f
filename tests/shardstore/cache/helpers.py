"""What the cached tables' tests share: counting pool calls, walking pages, filling a board."""

from __future__ import annotations

from typing import Any

from shardstore import Page, Store, compose

PIN, BOARD, USER = 1, 2, 3


def walk(mapping: Any, from_id: int, limit: int, *, oldest_first: bool = False) -> list[Page]:
    pages, cursor = [], None
    while True:
        page = mapping.page(from_id, limit=limit, cursor=cursor, oldest_first=oldest_first)
        pages.append(page)
        if page.cursor is None:
            return pages
        cursor = page.cursor
        assert len(pages) < 1000


def calls(pools: dict[str, Any]) -> dict[str, int]:
    return {name: pool.stats.calls for name, pool in pools.items()}


def delta(before: dict[str, int], pools: dict[str, Any]) -> dict[str, int]:
    return {n: c - before[n] for n, c in calls(pools).items() if c != before[n]}


def fill_board(store: Store, board: int, n: int, *, shard: int = 5) -> list[int]:
    """``n`` pins on ``board``, with ties of sequence (three pins share each sequence)."""
    pins = [compose(shard, PIN, local) for local in range(1, n + 1)]
    for i, pin in enumerate(pins):
        store.mapping("board_has_pins").add(board, pin, sequence=1000 + i // 3)
    return pins
