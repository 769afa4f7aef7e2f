"""Routing of users to Redis virtual shards: stable, and spread evenly over all 8192."""

from __future__ import annotations

import random
from collections import Counter

from shardstore import compose
from shardstore.redis_shards import VSHARDS, RedisShards, RedisTopology, vshard_of

USER = 3


def site_like_user_ids(count: int, *, seed: int = 8) -> list[int]:
    """User IDs as the site makes them: each on a random one of 4096 shards, with that
    shard's next local id (so local ids stay small: a few dozen per shard)."""
    rng = random.Random(seed)
    next_local: Counter[int] = Counter()
    ids = []
    for _ in range(count):
        shard = rng.randrange(4096)
        next_local[shard] += 1
        ids.append(compose(shard, USER, next_local[shard]))
    return ids


def test_users_spread_over_the_virtual_shards() -> None:
    load = Counter(vshard_of(user_id) for user_id in site_like_user_ids(100_000))
    mean = 100_000 / VSHARDS
    assert len(load) >= 8_000
    assert max(load.values()) <= 3 * mean


def test_one_shards_users_spread_too() -> None:
    """The demo's users, and any shard's: consecutive local ids on one shard."""
    load = Counter(vshard_of(compose(7, USER, local)) for local in range(1, 8193))
    assert len(load) >= 5_000  # 8192 balls in 8192 bins: about 1 - 1/e of them used


def test_a_two_instance_split_halves_the_users() -> None:
    shards = RedisShards(
        RedisTopology.from_json(
            {
                "version": 1,
                "instances": {"r1": "memory://split-a", "r2": "memory://split-b"},
                "ranges": [
                    {"range": [0, 4095], "instance": "r1"},
                    {"range": [4096, 8191], "instance": "r2"},
                ],
            }
        )
    )
    groups = shards.group(site_like_user_ids(10_000))
    assert 4_500 <= len(groups["r1"]) <= 5_500 and len(groups["r1"]) + len(groups["r2"]) == 10_000


def test_the_mixer_is_splitmix64s() -> None:
    """The published SplitMix64 sequence from seed 0 (its first outputs are the finalizer of
    1x and 2x the golden gamma): the function is the reference one, and cannot drift."""
    gamma = 0x9E3779B97F4A7C15
    assert vshard_of(gamma) == 0xE220A8397B1DCDAF % VSHARDS
    assert vshard_of(2 * gamma % 2**64) == 0x6E789E6AA1B965F4 % VSHARDS
