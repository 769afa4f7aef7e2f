"""The cache pools page: each pool's memcached servers and their ``stats``, this process's own
hit counters, and the Redis instances of the follower graph with their virtual shards.

Which servers a pool has comes from the caches document (or, when none is
published, from settings, as the process built its pools). A server that
does not answer within half a second is shown as unreachable, not waited for.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from shardstore.cache import LocalPool
from shardstore.control import documents
from shardstore.control.config_source import ConfigSource, NotPublished
from shardstore.redis_shards import RedisShards

from ...catalog import CACHE_POOLS

TIMEOUT = 0.5


@dataclass(frozen=True, kw_only=True)
class ServerStats:
    address: str
    reachable: bool
    error: str = ""
    hits: int = 0
    misses: int = 0
    items: int = 0
    bytes: int = 0
    limit_bytes: int = 0

    @property
    def hit_rate(self) -> str:
        return rate(self.hits, self.misses)


@dataclass(frozen=True)
class PoolView:
    name: str
    local: bool  # configured as process memory: no servers, each process has its own
    servers: list[ServerStats]
    process: dict[str, int]  # this process's hits, misses and calls on the pool
    process_local: bool  # this process's pool is its own memory (whatever is configured)

    @property
    def process_hit_rate(self) -> str:
        return rate(self.process["hits"], self.process["misses"])


@dataclass(frozen=True)
class RedisView:
    name: str
    url: str  # password masked
    ranges: list[tuple[int, int]]
    vshards: int
    memory: str  # INFO memory's used_memory_human, or what stands for it
    error: str = ""
    keys: int | None = None


def rate(hits: int, misses: int) -> str:
    total = hits + misses
    return f"{100 * hits / total:.1f}%" if total else "no reads yet"


def configured_servers(source: ConfigSource) -> tuple[dict[str, list[str]], str]:
    """Each pool's memcached servers (empty: local memory), and where that was read."""
    try:
        revision = source.current(documents.CACHES)
    except NotPublished:
        return dict(
            settings.SHARDSTORE["CACHE_POOLS"]
        ), "settings (no caches document is published)"
    return documents.cache_servers(revision.document), f"caches document v{revision.version}"


def pool_views(pools: Mapping[str, Any], servers: Mapping[str, list[str]]) -> list[PoolView]:
    every = sorted({server for names in servers.values() for server in names})
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(every)))) as pool:
        stats = dict(zip(every, pool.map(memcached_stats, every), strict=True))
    views = []
    for name in CACHE_POOLS:
        process = pools.get(name)
        views.append(
            PoolView(
                name,
                local=not servers.get(name),
                servers=[stats[server] for server in servers.get(name, [])],
                process=process.stats.as_dict() if process is not None else {},
                process_local=isinstance(process, LocalPool),
            )
        )
    return views


def memcached_stats(server: str) -> ServerStats:
    from pymemcache.client.base import Client

    host, _, port = server.rpartition(":")
    client = Client((host, int(port)), connect_timeout=TIMEOUT, timeout=TIMEOUT)
    try:
        raw = client.stats()
    except Exception as exc:  # noqa: BLE001 - any failure means "unreachable", shown as such
        return ServerStats(address=server, reachable=False, error=str(exc) or type(exc).__name__)
    finally:
        client.close()
    stats = {_text(key): value for key, value in raw.items()}
    return ServerStats(
        address=server,
        reachable=True,
        hits=int(stats.get("get_hits", 0)),
        misses=int(stats.get("get_misses", 0)),
        items=int(stats.get("curr_items", 0)),
        bytes=int(stats.get("bytes", 0)),
        limit_bytes=int(stats.get("limit_maxbytes", 0)),
    )


def redis_views(shards: RedisShards) -> list[RedisView]:
    topology = shards.topology
    names = list(topology.instances)
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(names)))) as pool:
        memory = dict(zip(names, pool.map(lambda n: _redis_memory(shards, n), names), strict=True))
    views = []
    for name in names:
        ranges = [(first, last) for first, last, owner in topology.ranges if owner == name]
        used, error, keys = memory[name]
        views.append(
            RedisView(
                name,
                documents.masked(topology.instances[name]),
                ranges,
                sum(last - first + 1 for first, last in ranges),
                used,
                error,
                keys,
            )
        )
    return views


def _redis_memory(shards: RedisShards, name: str) -> tuple[str, str, int | None]:
    """(used memory, error, keys) of one instance."""
    url = shards.topology.instances[name]
    if url.startswith("memory://"):  # the embedded in-process Redis has no INFO
        return "in this process (embedded)", "", int(shards.client(name).dbsize())
    import redis

    client = redis.Redis.from_url(url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT)
    try:
        info = client.info("memory")
        keys = int(client.dbsize())
    except redis.RedisError as exc:
        return "unreachable", str(exc), None
    finally:
        client.close()
    return str(info.get("used_memory_human", "?")), "", keys


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
