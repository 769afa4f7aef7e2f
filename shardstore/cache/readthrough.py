"""Read-through caching that a concurrent write cannot leave stale.

The classic race: a reader misses, reads the database, a writer commits and
invalidates, then the reader stores what it read before the write, and the
cache holds it forever. Here a reader first claims an empty key with a
marker of its own (``add`` of ``FILLING`` + a random token), then reads the
database, then replaces its marker with ``cas``, and only its own: another
reader's claim is left to that reader. A writer, after its commit, deletes
the key (objects, counts) or appends to it (lists): a deleted claim makes the
reader's ``cas`` impossible, so nothing stale is stored; appends made while
the reader was away are kept and merged by the reader.

A warm read costs one multi-get; a cold one also a batch of claims, one
multi-get of the claims' tokens and a batch of fills. Claims are
awaited (one round trip per server for the batch): a claim still on its way
when the database is read could land after a writer's delete and hold the
key for a value read before the write. Fills go without waiting for replies.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .pools import CachePool

#: The value of a key whose filler is reading the database.
FILLING = b"\x00filling"
#: How long a claim may stand if its filler dies.
FILL_SECONDS = 10


def read_through(
    pool: CachePool,
    keys: Sequence[str],
    load: Callable[[list[str]], Mapping[str, bytes]],
    *,
    expire: int = 0,
    merge: Callable[[bytes, bytes], bytes] | None = None,
) -> dict[str, bytes]:
    """The cached value of each key; misses are loaded (``load(missing) -> {key: value}``,
    one batch) and stored. With ``merge``, appends that landed on a claim while it was
    being filled are merged into the loaded value (``merge(loaded, appended)``)."""
    found = pool.get_many(keys)
    missing = [k for k in keys if found.get(k, FILLING).startswith(FILLING)]
    if not missing:
        return found
    claim = FILLING + secrets.token_bytes(8)
    pool.add_many(dict.fromkeys(missing, claim), FILL_SECONDS)
    loaded = load(missing)
    current = pool.gets_many(missing)
    fills = []
    for key in missing:
        value = loaded[key]
        held = current.get(key)
        if held is not None and held[0].startswith(claim):  # our claim, still standing
            appended = held[0][len(claim) :]
            if appended and merge is not None:
                value = merge(value, appended)
            fills.append((key, value, held[1]))
        found[key] = value
    pool.cas_many(fills, expire)
    return found


def invalidate(pool: CachePool, keys: Sequence[str]) -> None:
    """After a write has committed: drop the keys (and any claim a filler holds on them)."""
    pool.delete_many(keys)


def key_for(template: str, version: int, *parts: Any) -> str:
    """A versioned key, like the seeds' ``user:%d`` at version 1: ``v1:user:82363``."""
    return f"v{version}:" + template % parts
