"""What the cached tables' tests share: counting pool calls, walking pages, filling a folder."""

from __future__ import annotations

from typing import Any

from shardstore import Page, Store, compose

NOTE, FOLDER, ACCOUNT = 1, 2, 3


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


def fill_folder(store: Store, folder: int, n: int, *, shard: int = 5) -> list[int]:
    """``n`` notes on ``folder``, with ties of sequence (three notes share each sequence)."""
    notes = [compose(shard, NOTE, local) for local in range(1, n + 1)]
    for i, note in enumerate(notes):
        store.mapping("folder_has_notes").add(folder, note, sequence=1000 + i // 3)
    return notes
