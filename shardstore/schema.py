"""Create every shard database and table of a topology: idempotent, host by host in parallel.

Tables are created on masters only; a replica receives them through replication.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .interface import StoreInterface

Progress = Callable[[int, int], None]


def init_shards(
    store: StoreInterface,
    *,
    progress: Progress | None = None,
    threads_per_host: int = 4,
    hosts: list[str] | None = None,
) -> int:
    """Create the databases and tables of every shard (or of ``hosts``' shards).

    Calls ``progress(done, total)`` as shards finish. Returns the number of shards.
    """
    topology = store.topology
    tables = store.table_set()
    work = [
        (backend, shard_id)
        for host, backend in store.backends().items()
        if hosts is None or host in hosts
        for shard_id in topology.shards_of(host)
    ]
    total, done = len(work), 0
    lock = threading.Lock()

    def create(item: tuple) -> None:  # type: ignore[type-arg]
        nonlocal done
        backend, shard_id = item
        backend.create_shard(shard_id, tables)
        with lock:
            done += 1
            if progress:
                progress(done, total)

    # One pool per host, so a slow host does not hold back the others.
    by_host: dict[str, list[tuple]] = {}  # type: ignore[type-arg]
    for backend, shard_id in work:
        by_host.setdefault(backend.host, []).append((backend, shard_id))
    executors = [ThreadPoolExecutor(threads_per_host) for _ in by_host]
    try:
        futures = [
            ex.submit(create, item)
            for ex, items in zip(executors, by_host.values(), strict=False)
            for item in items
        ]
        for future in futures:
            future.result()
    finally:
        for executor in executors:
            executor.shutdown(cancel_futures=True)
    return total
