"""User IDs placed on a chosen half of the Redis virtual shards, for tests on two instances.

Two-instance tests map virtual shards [0, 4095] to the first instance and
[4096, 8191] to the second. ``vshard_of`` mixes the whole ID, so which users
land where is found by search: ``user(n)`` is the n-th user ID (on shard 2 by
default) of the first half, ``user(HIGH + n)`` the n-th of the second.
"""

from __future__ import annotations

from functools import cache

from shardstore import compose
from shardstore.redis_shards import VSHARDS, vshard_of

USER = 3
HIGH = VSHARDS // 2  # user(HIGH + n): a user of the second half


@cache
def _half(shard: int, second: bool, count: int) -> tuple[int, ...]:
    found: list[int] = []
    local = 1
    while len(found) < count:
        user_id = compose(shard, USER, local)
        if (vshard_of(user_id) >= HIGH) == second:
            found.append(user_id)
        local += 1
    return tuple(found)


def user(n: int, shard: int = 2) -> int:
    """The n-th user of the first half (``n < HIGH``) or of the second (``HIGH + n``)."""
    second, index = n >= HIGH, n % HIGH
    return _half(shard, second, max(1024, index + 1))[index]
