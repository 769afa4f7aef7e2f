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

A warm read costs one multi-get. A cold one also costs one round trip for the
claims (a batch of adds, then a ``gets`` of their keys, whose answer says the
claims are in place: a claim still on its way when the database is read could
land after a writer's delete and hold the key for a value read before the
write), and a batch of fills sent without waiting for replies, each a ``cas``
on the token its claim was given, which fails if anything touched the key
since. A list (``merge``) reads its claim again after loading instead, to merge
the appends that landed on it meanwhile.
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
    fetched: Mapping[str, bytes] | None = None,
) -> dict[str, bytes]:
    """The cached value of each key; misses are loaded (``load(missing) -> {key: value}``,
    one batch) and stored. With ``merge``, appends that landed on a claim while it was
    being filled are merged into the loaded value (``merge(loaded, appended)``). ``fetched``:
    what the pool held of ``keys``, when a read of several pools got them already."""
    found = pool.get_many(keys) if fetched is None else dict(fetched)
    missing = [k for k in keys if found.get(k, FILLING).startswith(FILLING)]
    if not missing:
        return found
    claim = FILLING + secrets.token_bytes(8)
    held = pool.claim_many(dict.fromkeys(missing, claim), FILL_SECONDS)
    # A key another reader filled between our get and our claim: its value stands.
    filled = {k: held[k][0] for k in missing if k in held and not held[k][0].startswith(FILLING)}
    found.update(filled)
    missing = [k for k in missing if k not in filled]
    loaded = load(missing) if missing else {}
    if merge is not None:
        held = pool.gets_many(missing)
    fills = []
    for key in missing:
        value = loaded[key]
        current = held.get(key)
        if current is not None and current[0].startswith(claim):  # our claim, still standing
            appended = current[0][len(claim) :]
            if appended and merge is not None:
                value = merge(value, appended)
            fills.append((key, value, current[1]))
        found[key] = value
    pool.cas_many(fills, expire)
    return found


def invalidate(pool: CachePool, keys: Sequence[str]) -> None:
    """After a write has committed: drop the keys (and any claim a filler holds on them)."""
    pool.delete_many(keys)


def key_for(template: str, version: int, *parts: Any) -> str:
    """A versioned key, like the seeds' ``user:%d`` at version 1: ``v1:user:82363``."""
    return f"v{version}:" + template % parts
