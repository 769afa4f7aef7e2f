"""The process's data plane, built from settings on first use: the shard store behind its
cache pools, the Redis follower graph and the home feeds.

Django settings only configure; everything here is shardstore, which a Celery
worker or a script could build alone. Tests point a process at their own
servers with ``use()``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from django.conf import settings

from shardstore import Store, Topology
from shardstore.cache import CachedStore, CachePool, LocalPool, MemcachePool
from shardstore.feeds import HomeFeeds
from shardstore.graph import FollowerGraph
from shardstore.graph_sync import sync_graph
from shardstore.redis_shards import RedisShards, RedisTopology

#: The cache pools, one per kind of data (Django CACHES entries of these names).
POOLS = ("users", "boards", "pins", "lists")


@dataclass
class DataPlane:
    store: CachedStore
    graph: FollowerGraph
    feeds: HomeFeeds
    graph_ready: bool = False  # the embedded in-process graph is derived once per process

    def close(self) -> None:
        self.store.close()
        for pool in self.store.pools.values():
            close = getattr(pool, "close", None)
            if close is not None:
                close()
        self.graph.shards.close()


_plane: DataPlane | None = None
_lock = threading.Lock()


def topology_from_settings() -> Topology:
    config = settings.SHARDSTORE
    if config["TOPOLOGY_FILE"]:
        return Topology.load(config["TOPOLOGY_FILE"])
    return Topology.single_host(
        f"sqlite://{config['EMBEDDED_DIR']}", shard_count=config["EMBEDDED_SHARDS"]
    )


def redis_topology_from_settings() -> RedisTopology:
    config = settings.FOLLOWER_REDIS
    if config["TOPOLOGY_FILE"]:
        import json
        from pathlib import Path

        return RedisTopology.from_json(json.loads(Path(config["TOPOLOGY_FILE"]).read_text()))
    return RedisTopology.single(config["URL"])


def pool_from_settings(name: str) -> CachePool:
    """A pool configured by the Django CACHES entry of that name: memcached or local memory."""
    entry = settings.CACHES[name]
    if entry["BACKEND"].endswith("PyMemcacheCache"):
        location = entry["LOCATION"]
        return MemcachePool(name, location if isinstance(location, list) else location.split(","))
    return LocalPool(name)


def build(store: Store, pools: dict[str, CachePool], redis_topology: RedisTopology) -> DataPlane:
    shards = RedisShards(redis_topology)
    return DataPlane(CachedStore(store, pools), FollowerGraph(shards), HomeFeeds(shards))


def _plane_from_settings() -> DataPlane:
    store = Store(topology_from_settings(), backend_options=settings.SHARDSTORE["BACKEND_OPTIONS"])
    pools = {name: pool_from_settings(name) for name in POOLS}
    return build(store, pools, redis_topology_from_settings())


def plane() -> DataPlane:
    global _plane
    if _plane is None:
        with _lock:
            if _plane is None:
                _plane = _plane_from_settings()
    return _plane


def use(new: DataPlane | None) -> DataPlane | None:
    """Swap the process's data plane (tests); returns the previous one."""
    global _plane
    with _lock:
        previous, _plane = _plane, new
    return previous


def get_store() -> CachedStore:
    """The shard store behind its cache pools (same API as shardstore.Store)."""
    return plane().store


def get_graph() -> FollowerGraph:
    return _with_graph().graph


def get_feeds() -> HomeFeeds:
    return _with_graph().feeds


def _with_graph() -> DataPlane:
    current = plane()
    if not current.graph_ready:
        with _lock:
            if not current.graph_ready:
                instances = current.graph.shards.topology.instances.values()
                if all(url.startswith("memory://") for url in instances):
                    # The embedded in-process Redis starts empty in every process: derive
                    # the follower graph from MySQL, its source of truth (feeds rebuild on
                    # each pinner's next visit).
                    sync_graph(current.store.store, current.graph, wipe=True)
                current.graph_ready = True
    return current
