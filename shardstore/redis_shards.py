"""The Redis virtual-shard map: 8192 virtual shards over Redis instances.

Like the MySQL topology, a JSON document maps ranges of virtual shards to
instances, so an instance's shards can be split off later by copying them to
a replica and changing the map::

    {"version": 1, "vshards": 8192,
     "instances": {"redis1": "redis://10.0.1.1:6379/0"},
     "ranges": [{"range": [0, 8191], "instance": "redis1"}]}

A user's keys (a follower graph, a home feed) live on ``vshard_of(user_id)``;
what a user owns keeps its keys with the user's. ``memory://name`` is an in-process
Redis (fakeredis) for the embedded default; tests and deployments use real servers.

``vshard_of`` hashes the whole 64-bit ID with SplitMix64's finalizer (Steele,
Lea and Flood, 2014; the mixer of java.util.SplittableRandom), then takes it
modulo 8192. The low bits of an ID are its local id, small and dense on every
shard, so ``id % 8192`` put a million users on a few hundred virtual shards
and the demo's on one; mixed, every bit of the ID (shard, type, local id)
moves every bit of the result. It is pure arithmetic, fixed forever: changing
it moves every user's keys. Runbook for such a move (or for data written under
another function): ``python manage.py follower_graph rebuild`` rewrites the
graph on the instances the map now names and deletes what is left elsewhere,
feed keys included, then writes each user's home feed there from MySQL.

A move of virtual shards (``control.redis_move``) has no fence in Redis itself: it relies
on every process writing by the new map once it has waited for them. So a process that
may have missed a map, cut off from its config source past its lease
(``ConfigFollower.lease``), writes to no instance: ``RedisShards(lease=...)`` refuses
every command that is not a read (``RedisWritesRefused``, a ``redis.ConnectionError``:
the site treats it as it treats a Redis that does not answer), and reads go on. What
Redis holds is derived from MySQL, and ``follower_graph repair`` rebuilds what a refused
write left out. An in-process Redis (``memory://``) is no other process's, and no move
strands its writes: it is not fenced.
"""

from __future__ import annotations

import bisect
import functools
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import redis
import redis.client

from . import metrics
from .exceptions import InvalidTopology, ShardStoreError

VSHARDS = 8192
#: Why this process may not write to Redis now, or None if it may.
Lease = Callable[[], str | None]

#: The commands that change no data: all that a process past its lease may still send.
#: Any other is taken for a write, so a command the code starts using later is fenced.
READS = frozenset(
    {
        *("GET", "MGET", "EXISTS", "TYPE", "TTL", "PTTL", "DUMP", "SCAN", "STRLEN"),
        *("HGET", "HMGET", "HGETALL", "HLEN", "HEXISTS", "HKEYS", "HVALS", "HSCAN"),
        *("SISMEMBER", "SMISMEMBER", "SMEMBERS", "SCARD", "SSCAN"),
        *("ZSCORE", "ZMSCORE", "ZCARD", "ZCOUNT", "ZRANK", "ZREVRANK", "ZSCAN"),
        *("ZRANGE", "ZREVRANGE", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "LRANGE", "LLEN"),
        *("PING", "INFO", "DBSIZE", "MEMORY USAGE", "SCRIPT LOAD", "SCRIPT EXISTS"),
        # A transaction's frame: the commands inside are checked one by one.
        *("WATCH", "UNWATCH", "MULTI", "EXEC", "DISCARD"),
    }
)


class RedisWritesRefused(ShardStoreError, redis.ConnectionError):
    """A write to Redis refused before it was sent: this process has not reached its
    config source for its lease, so it may have missed a new Redis map (a move of
    virtual shards) and must not write by the one it has. Reads go on; writes resume once
    the source answers again."""


_MASK64 = (1 << 64) - 1


def vshard_of(user_id: int) -> int:
    """The virtual shard of a user's keys: SplitMix64's finalizer of the ID, mod 8192."""
    x = user_id & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return (x ^ (x >> 31)) % VSHARDS


@dataclass(frozen=True)
class RedisTopology:
    version: int
    instances: Mapping[str, str]
    ranges: tuple[tuple[int, int, str], ...]

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> RedisTopology:
        version = document.get("version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            raise InvalidTopology("redis topology: version must be a non-negative integer")
        if document.get("vshards", VSHARDS) != VSHARDS:
            raise InvalidTopology(f"redis topology: vshards must be {VSHARDS}")
        instances = document.get("instances")
        if not isinstance(instances, Mapping) or not instances:
            raise InvalidTopology("redis topology: instances must name at least one instance")
        for name, url in instances.items():
            if not isinstance(url, str) or not url.startswith(("redis://", "memory://")):
                raise InvalidTopology(
                    f"redis instance {name}: address must be redis://... or memory://..."
                )
        entries = document.get("ranges") or []
        if not isinstance(entries, list):
            raise InvalidTopology("redis topology: ranges must be a list")
        ranges = []
        for entry in entries:
            if not isinstance(entry, Mapping):
                raise InvalidTopology(f"redis topology: a range must be an object, not {entry!r}")
            pair, instance = entry.get("range"), entry.get("instance")
            if not (
                isinstance(pair, list)
                and len(pair) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in pair)
                and 0 <= pair[0] <= pair[1] < VSHARDS
            ):
                raise InvalidTopology(f"redis topology: bad range {pair!r}")
            first, last = pair
            if not isinstance(instance, str):
                raise InvalidTopology(f"redis topology: range {pair} needs an instance name")
            if instance not in instances:
                raise InvalidTopology(
                    f"redis topology: range [{first}, {last}] names unknown instance {instance!r}"
                )
            ranges.append((first, last, instance))
        ranges.sort()
        expected = 0
        for first, last, _ in ranges:
            if first != expected:
                raise InvalidTopology(
                    f"redis topology: virtual shards {expected}.. are not covered exactly"
                )
            expected = last + 1
        if expected != VSHARDS:
            raise InvalidTopology(
                f"redis topology: virtual shards {expected}..{VSHARDS - 1} are in no range"
            )
        return cls(version, dict(instances), tuple(ranges))

    @classmethod
    def single(cls, url: str) -> RedisTopology:
        return cls.from_json(
            {
                "version": 1,
                "instances": {"redis1": url},
                "ranges": [{"range": [0, VSHARDS - 1], "instance": "redis1"}],
            }
        )

    def instance_of(self, vshard: int) -> str:
        index = bisect.bisect_right([r[0] for r in self.ranges], vshard) - 1
        return self.ranges[index][2]


class RedisShards:
    """Clients for the instances of a RedisTopology, and routing of users to them.

    ``lease``: why this process may not write now (``ConfigFollower.lease``); while it
    gives a reason, every write to a ``redis://`` instance raises ``RedisWritesRefused``.
    """

    def __init__(self, topology: RedisTopology, *, lease: Lease | None = None) -> None:
        self.topology = topology
        self.lease: Lease = lease or _free
        self._read_scripts: set[str] = set()  # the SHA1s of scripts that write nothing
        self._clients = {
            name: _client(url, functools.partial(self._admit, name))
            for name, url in topology.instances.items()
        }
        self.calls = 0  # round trips made (a pipeline is one), for tests and benchmarks
        self._lock = threading.Lock()

    def register_read_script(self, instance: str, script: str) -> Any:
        """``instance``'s ``register_script(script)`` for a Lua script that writes nothing,
        so that it runs while writes are refused (any other script counts as a write)."""
        registered = self._clients[instance].register_script(script)
        self._read_scripts.add(registered.sha)
        return registered

    def _admit(self, instance: str, args: tuple[Any, ...]) -> None:
        """Raise RedisWritesRefused if the command ``args`` writes and this process may not."""
        command = str(args[0]).upper()
        if command in READS or (command == "EVALSHA" and args[1] in self._read_scripts):
            return
        refused = self.lease()
        if refused is not None:
            raise RedisWritesRefused(f"{command} on Redis instance {instance} refused: {refused}")

    def client_for(self, user_id: int) -> Any:
        """The client of the instance holding ``user_id``'s keys."""
        return self._clients[self.topology.instance_of(vshard_of(user_id))]

    def instance_for(self, user_id: int) -> str:
        return self.topology.instance_of(vshard_of(user_id))

    def client(self, instance: str) -> Any:
        return self._clients[instance]

    def clients(self) -> dict[str, Any]:
        return dict(self._clients)

    def group(self, user_ids: Iterable[int]) -> dict[str, list[int]]:
        """User IDs by the instance holding their keys."""
        groups: dict[str, list[int]] = defaultdict(list)
        for user_id in user_ids:
            groups[self.instance_for(user_id)].append(user_id)
        return groups

    def count_call(self, n: int = 1) -> None:
        with self._lock:
            self.calls += n
        metrics.REDIS_CALLS.inc(n)

    def close(self) -> None:
        for client in self._clients.values():
            client.close()


def _free() -> str | None:
    return None


#: ``admit(args)``: raises if the command ``args`` may not be sent now.
Admit = Callable[[tuple[Any, ...]], None]


class _FencedRedis(redis.Redis):
    """A client that asks ``admit`` before each command, and its pipelines too."""

    admit: Admit

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self.admit(args)
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> redis.client.Pipeline:
        pipe = _FencedPipeline(
            self.connection_pool, self.response_callbacks, transaction, shard_hint
        )
        pipe.admit = self.admit
        return pipe


class _FencedPipeline(redis.client.Pipeline):
    """A pipeline that asks ``admit`` as each command is queued (or, under WATCH, sent):
    a refused write raises before anything of its transaction is sent."""

    admit: Admit

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self.admit(args)
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


_memory_servers: dict[str, Any] = {}


def _client(url: str, admit: Admit) -> Any:
    if url.startswith("memory://"):
        import fakeredis

        name = url.removeprefix("memory://") or "default"
        server = _memory_servers.setdefault(name, fakeredis.FakeServer())
        return fakeredis.FakeRedis(server=server)
    client = cast(
        _FencedRedis,
        _FencedRedis.from_url(
            url, socket_timeout=2.0, socket_connect_timeout=2.0, health_check_interval=30
        ),
    )
    client.admit = admit
    return client
