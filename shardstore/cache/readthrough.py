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
the appends that landed on it meanwhile. Reads that a page makes at one step go
together (``read_through_all``): each of these round trips is made once per memcached
server for them all.

What a read may put into its pool is its store's ``Fills``. A fill expires after
``seconds`` (a day unless the store is given another), so a value that should not be
there (read by a stale shard map, or whose invalidation was lost) dies by itself; the
expiry travels in the fill's ``cas``, no round trip more. memcached's APPEND leaves an
item's expiry as it was, so a list appended to is read from MySQL again ``seconds``
after its fill, like any value. And while ``cut_off()`` gives a reason (the process
cannot confirm its shard map: its config follower's lease is over, or it started from
its local copy and has not reached the source since) nothing is stored: its misses are
read from MySQL and served, with no claim and no fill, so that a value it read from a
copy a move left behind (frozen, or fed late) never reaches another process.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..exceptions import ShardUnavailable
from ..selects import Selects, run_together
from .across import claim_across, fill_across, get_across, gets_across
from .pools import CachePool

#: The value of a key whose filler is reading the database.
FILLING = b"\x00filling"
#: How long a claim may stand if its filler dies.
FILL_SECONDS = 10
#: How long a fill lives at most (seconds), by default: a day.
FILL_TTL = 24 * 3600
#: memcached takes an expiry past 30 days for a point in time: a fill's is at most that.
MAX_FILL_TTL = 30 * 24 * 3600


@dataclass(frozen=True)
class Fills:
    """What a read through may store: fills that expire after ``seconds``, and none while
    ``cut_off()`` says why this process cannot confirm its shard map (``ConfigFollower.lease``).
    """

    seconds: int = FILL_TTL
    cut_off: Callable[[], str | None] | None = None

    def __post_init__(self) -> None:
        if not 0 < self.seconds <= MAX_FILL_TTL:
            raise ValueError(f"a fill's expiry is 1 to {MAX_FILL_TTL} seconds, not {self.seconds}")

    def withheld(self) -> str | None:
        """Why this process stores nothing in the caches now (no fill, no append), or None."""
        return self.cut_off() if self.cut_off is not None else None


#: A store's fills, unless it is given others.
DEFAULT_FILLS = Fills()


@dataclass(frozen=True)
class Through:
    """A read of ``keys`` of ``pool`` through to the database: ``load(missing) -> {key:
    value}`` reads what the pool misses, in one batch. With ``merge``, appends that landed
    on a claim while it was being filled are merged into the loaded value (``merge(loaded,
    appended)``). ``load`` plans its SELECTs: a step's loads run together (one round trip
    per MySQL host for them all, selects.py). ``fills``: what it may store (``Fills``)."""

    pool: CachePool
    keys: Sequence[str]
    load: Callable[[list[str]], Selects[dict[str, bytes]]]
    merge: Callable[[bytes, bytes], bytes] | None = None
    fills: Fills = DEFAULT_FILLS


def read_through(
    pool: CachePool,
    keys: Sequence[str],
    load: Callable[[list[str]], Selects[dict[str, bytes]]],
    *,
    merge: Callable[[bytes, bytes], bytes] | None = None,
    fills: Fills = DEFAULT_FILLS,
) -> dict[str, bytes]:
    """The cached value of each key; misses are loaded and stored (see ``Through``)."""
    return read_through_all([Through(pool, keys, load, merge, fills)])[0]


def read_through_all(reads: Sequence[Through]) -> list[dict[str, bytes]]:
    """The cached values of each read's keys, the reads made together: one multi-get per
    home (a memcached server) for them all; if any missed, one round trip of claims per
    home, the loads' SELECTs (one round trip per MySQL host), one ``gets`` per home of the
    lists' claims, and the fills sent in one write per home. A read whose ``fills`` are
    withheld claims and fills nothing: its misses are loaded and served only."""
    found = get_across([(read.pool, read.keys) for read in reads])
    missing = {
        index: keys
        for index, read in enumerate(reads)
        if (keys := [k for k in read.keys if found[index].get(k, FILLING).startswith(FILLING)])
    }
    if not missing:
        return found
    claim = FILLING + secrets.token_bytes(8)
    claiming = [i for i in missing if reads[i].fills.withheld() is None]
    claims = claim_across([(reads[i].pool, missing[i]) for i in claiming], claim, FILL_SECONDS)
    held = dict(zip(claiming, claims, strict=True))
    for index in claiming:
        keys = missing[index]
        # A key another reader filled between our get and our claim: its value stands.
        filled = {
            k: held[index][k][0]
            for k in keys
            if k in held[index] and not held[index][k][0].startswith(FILLING)
        }
        found[index].update(filled)
        missing[index] = [k for k in keys if k not in filled]
    loading = {i: reads[i].load(keys) for i, keys in missing.items() if keys}
    loaded = dict(zip(loading, run_together(list(loading.values())), strict=True))
    merging = [i for i in claiming if missing[i] and reads[i].merge]
    if merging:  # what was appended to the lists' claims while they were loaded
        again = gets_across([(reads[i].pool, missing[i]) for i in merging])
        held.update(zip(merging, again, strict=True))
    fills: list[tuple[CachePool, int, list[tuple[str, bytes, Any]]]] = []
    for index, keys in missing.items():
        merge, ours = reads[index].merge, []
        for key in keys:
            value = loaded[index][key]
            current = held.get(index, {}).get(key)  # none where the fills are withheld
            if current is not None and current[0].startswith(claim):  # our claim, standing
                appended = current[0][len(claim) :]
                if appended and merge is not None:
                    value = merge(value, appended)
                ours.append((key, value, current[1]))
            found[index][key] = value
        fills.append((reads[index].pool, reads[index].fills.seconds, ours))
    fill_across(fills)
    return found


def invalidate(pool: CachePool, keys: Sequence[str]) -> None:
    """After a write has committed: drop the keys (and any claim a filler holds on them)."""
    pool.delete_many(keys)


@contextmanager
def forgetting(forget: Callable[[], None]) -> Iterator[None]:
    """Around a write: ``forget`` what it touched once it has committed, and also when it
    failed with its host unavailable, since its outcome is then unknown (a commit given up
    on may have landed all the same). Any other error changed nothing."""
    try:
        yield
    except ShardUnavailable:
        forget()
        raise
    forget()


def key_for(template: str, version: int, *parts: Any) -> str:
    """A versioned key, like the seeds' ``user:%d`` at version 1: ``v1:user:82363``."""
    return f"v{version}:" + template % parts
