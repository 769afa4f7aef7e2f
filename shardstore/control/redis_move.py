"""Move a range of Redis virtual shards to another instance: copy the keys, switch, drop.

Which keys a virtual shard holds is the user's to say (``keys_of``): a social
model, say, keeps a user's keys by ``vshard_of(id)`` and those of what the user
owns with them. So is how the moved keys are repaired from their source of truth
(``repair``). Both are arguments, as ``connect`` is to a failover.

Steps, in order:

1. copy every key of the moving virtual shards from each instance that holds
   them to the target (DUMP/RESTORE, with their time to live);
2. publish the Redis map with the range on the target; every process swaps
   within a second;
3. wait until every process reports it (``followed_step``), then ``settle_seconds``
   for the requests and tasks begun on the old map, so no process still writes to the
   old instance. Redis has no fence of its own: a process cut off from the config
   source is waited on until its lease is over, and past it writes to no Redis
   instance (``RedisShards``);
4. ``repair`` the moved keys (writes that reached the old instance between the
   copy and the switch: the site's repairs its follower graph from MySQL);
5. delete the moved keys from the old instances.

Until step 5 the old copy is whole: to revert, publish the previous map again
(``topology rollback``) and repair.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..exceptions import InvalidTopology
from ..interface import StoreInterface
from ..redis_shards import VSHARDS, RedisShards, RedisTopology
from . import documents
from .config_source import ConfigSource
from .plans import Plan, Step
from .publish import followed_step, publish_step

#: How long the requests and tasks begun on the old map are given to end, once every
#: process has swapped in the new one (a swap does not wait for them).
SETTLE_SECONDS = 2.0
_BATCH = 500

#: Whether a virtual shard is one of those moving.
Moving = Callable[[int], bool]
#: ``keys_of(client, store, moving)``: the keys on an instance (a redis-py client) that
#: belong to moving virtual shards.
KeysOf = Callable[[Any, StoreInterface, Moving], Iterable[str]]
#: ``repair(store, shards, moving)``: repair the moved keys from their source of truth,
#: on the new map's ``shards``; returns a line for the journal.
Repair = Callable[[StoreInterface, RedisShards, Moving], str]


@dataclass(frozen=True)
class RedisKeys:
    """What a user of the library keeps in Redis, as a move needs to know it."""

    keys_of: KeysOf
    repair: Repair
    #: The repair's step in a plan, ``{where}`` the virtual shards moved.
    repair_step: str = "repair the keys of {where}"


def plan_redis_move(
    source: ConfigSource,
    store: StoreInterface,
    *,
    first: int,
    last: int,
    instance: str,
    url: str | None = None,
    author: str,
    keys: RedisKeys,
    settle_seconds: float = SETTLE_SECONDS,
) -> Plan:
    """The plan to serve virtual shards ``first..last`` from ``instance`` (``url`` if new),
    moving the keys ``keys.keys_of`` finds and mending them with ``keys.repair`` after the
    switch, as ``plan_failover`` is handed ``connect``."""
    if not 0 <= first <= last < VSHARDS:
        raise InvalidTopology(f"virtual shards must be a range within 0..{VSHARDS - 1}")
    current = source.current(documents.REDIS)
    old = RedisTopology.from_json(current.document)
    instances = dict(old.instances)
    if instance not in instances:
        if not url:
            raise InvalidTopology(f"instance {instance} is new: give its redis:// URL")
        instances[instance] = url
    ranges = _assign(old.ranges, first, last, instance)
    donors = sorted({name for a, b, name in old.ranges if a <= last and b >= first} - {instance})
    if not donors:
        raise InvalidTopology(f"virtual shards {first}..{last} are on {instance} already")
    new = documents.validate(
        documents.REDIS,
        {
            **current.document,
            "instances": instances,
            "ranges": [{"range": [a, b], "instance": name} for a, b, name in ranges],
        },
    )
    new_topology = RedisTopology.from_json(new)

    def moving(vshard: int) -> bool:
        return first <= vshard <= last

    def copy(donor: str) -> str:
        shards = RedisShards(new_topology)
        try:
            found = list(keys.keys_of(shards.client(donor), store, moving))
            _copy(shards.client(donor), shards.client(instance), found)
        finally:
            shards.close()
        return f"{len(found)} keys copied from {donor}"

    def settle() -> str:
        time.sleep(settle_seconds)
        return f"waited {settle_seconds:g}s"

    def mend() -> str:
        shards = RedisShards(new_topology)
        try:
            return keys.repair(store, shards, moving)
        finally:
            shards.close()

    def drop(donor: str) -> str:
        shards = RedisShards(new_topology)
        try:
            client = shards.client(donor)
            found = list(keys.keys_of(client, store, moving))
            for start in range(0, len(found), _BATCH):
                client.delete(*found[start : start + _BATCH])
        finally:
            shards.close()
        return f"{len(found)} keys deleted from {donor}"

    where = f"virtual shards {first}..{last}"
    steps = [
        Step(f"copy the keys of {where} from {d} to {instance}", (d, instance), _bind(copy, d))
        for d in donors
    ]
    steps += [
        publish_step(
            source,
            current,
            new,
            author=author,
            reason=f"move {where} to {instance}",
            change=f"{where} on {instance}",
            hosts=(instance,),
        ),
        followed_step(source, documents.REDIS, current.version + 1, hosts=(instance,)),
        Step(f"wait {settle_seconds:g}s for the work begun on the old map", (), settle),
        Step(keys.repair_step.format(where=where), (instance,), mend),
    ]
    steps += [Step(f"delete the keys of {where} from {d}", (d,), _bind(drop, d)) for d in donors]
    return Plan(
        "redis-move",
        f"move {where} from {', '.join(donors)} to {instance}",
        steps,
        {"first": first, "last": last, "instance": instance},
    )


def _bind(function: Callable[[str], str], argument: str) -> Callable[[], str]:
    return lambda: function(argument)


def _assign(
    ranges: tuple[tuple[int, int, str], ...], first: int, last: int, instance: str
) -> list[tuple[int, int, str]]:
    """The ranges with ``first..last`` given to ``instance``, neighbours of one instance merged."""
    pieces: list[tuple[int, int, str]] = []
    for a, b, name in ranges:
        if a < first:
            pieces.append((a, min(b, first - 1), name))
        if b > last:
            pieces.append((max(a, last + 1), b, name))
    pieces.append((first, last, instance))
    merged: list[tuple[int, int, str]] = []
    for a, b, name in sorted(pieces):
        if merged and merged[-1][2] == name and merged[-1][1] + 1 == a:
            merged[-1] = (merged[-1][0], b, name)
        else:
            merged.append((a, b, name))
    return merged


def _copy(donor: Any, target: Any, keys: list[str]) -> None:
    for start in range(0, len(keys), _BATCH):
        chunk = keys[start : start + _BATCH]
        read = donor.pipeline(transaction=False)
        for key in chunk:
            read.dump(key)
            read.pttl(key)
        values = read.execute()
        write = target.pipeline(transaction=False)
        for n, key in enumerate(chunk):
            dumped, ttl = values[2 * n], values[2 * n + 1]
            if dumped is not None:  # gone meanwhile
                write.restore(key, max(ttl, 0), dumped, replace=True)
        write.execute()
