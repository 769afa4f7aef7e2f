"""Commands to several pools at once, for the reads a page makes at one step: one round
trip per home (a memcached server, or a process's ``LocalMemory``), however many pools
live there. A round trip counts as a call of the pool that makes it, the first of those
asked at that home."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

from .. import metrics
from .pools import CachePool

V = TypeVar("V")


def get_across(wanted: Sequence[tuple[CachePool, Sequence[str]]]) -> list[dict[str, bytes]]:
    """What each pool holds of its keys, for a page that needs several pools' keys at one
    step (a collection, its owner and its list of items): one multi-get per home, however many
    pools live there. Every pool counts its own hits and misses."""
    found = _ask(wanted, lambda pool, home, keys: pool.fetch(home, keys))
    for (pool, keys), held in zip(wanted, found, strict=True):
        hits = sum(key in held for key in keys)
        pool.stats.looked_up(hits, len(keys) - hits)
    return found


def gets_across(
    wanted: Sequence[tuple[CachePool, Sequence[str]]],
) -> list[dict[str, tuple[bytes, Any]]]:
    """``get_across`` with each value's cas token (hits and misses uncounted)."""
    return _ask(wanted, lambda pool, home, keys: pool.fetch_tokens(home, keys))


def claim_across(
    wanted: Sequence[tuple[CachePool, Sequence[str]]], claim: bytes, expire: int
) -> list[dict[str, tuple[bytes, Any]]]:
    """``claim`` each pool's keys with the value ``claim``: one round trip per home."""
    return _ask(
        wanted, lambda pool, home, keys: pool.claim(home, dict.fromkeys(keys, claim), expire)
    )


def fill_across(
    wanted: Sequence[tuple[CachePool, int, Sequence[tuple[str, bytes, Any]]]],
) -> None:
    """``fill`` each pool's (key, value, token), to expire after the seconds given with
    it: one write per home, replies not awaited."""
    items = [
        {key: (key, value, token, expire) for key, value, token in fills}
        for _, expire, fills in wanted
    ]
    keyed = [(pool, list(items[index])) for index, (pool, _, _) in enumerate(wanted)]
    for pool, home, parts in _round_trips(keyed):
        pool.fill(home, [items[index][key] for index, batch in parts for key in batch])
    for pool, _, fills in wanted:
        if fills:
            metrics.CACHE_FILLS.labels(pool.name).inc(len(fills))


def _ask(
    wanted: Sequence[tuple[CachePool, Sequence[str]]],
    command: Callable[[CachePool, Hashable, list[str]], Mapping[str, V]],
) -> list[dict[str, V]]:
    """``command(pool, home, keys)`` once per home for every key there, and what it
    answered of each of ``wanted``'s keys."""
    found: list[dict[str, V]] = [{} for _ in wanted]
    for pool, home, parts in _round_trips(wanted):
        held = command(pool, home, [key for _, batch in parts for key in batch])
        for index, batch in parts:
            found[index].update((key, held[key]) for key in batch if key in held)
    return found


def _round_trips(
    wanted: Sequence[tuple[CachePool, Sequence[str]]],
) -> list[tuple[CachePool, Hashable, list[tuple[int, list[str]]]]]:
    """One round trip per home the keys live at: the pool that makes it (the first of
    ``wanted`` there, which counts it as a call) and which keys of each of ``wanted`` go."""
    homes: dict[Hashable, list[tuple[int, list[str]]]] = {}
    for index, (pool, keys) in enumerate(wanted):
        if keys:
            for home, batch in pool.homes(keys).items():
                homes.setdefault(home, []).append((index, batch))
    trips = []
    for home, parts in homes.items():
        pool = wanted[parts[0][0]][0]
        pool.stats.call()
        trips.append((pool, home, parts))
    return trips
