"""The process's data plane: the shard store behind its cache pools, the Redis follower graph,
home feeds and notifications, built from the config documents and kept current as they change.

Where the documents come from (``settings.SHARDSTORE["CONFIG"]``, from
``PINBOARD_TOPOLOGY``): a config directory, a shard-map file, or
``zk://hosts/root``. The embedded default is the directory ``var/config/``,
whose shard map is written on first use (SQLite shards under ``var/shards/``).
A document the source does not hold comes from settings: the Redis map from
``PINBOARD_REDIS_URL`` / ``PINBOARD_REDIS_TOPOLOGY``, the cache pools from
``SHARDSTORE["CACHE_POOLS"]`` (``PINBOARD_MEMCACHED``).

Every process follows the documents (``shardstore.control.follower``) and
swaps each new version in between requests and tasks: ``bound()`` (the
middleware around each request, Celery's signals around each task) binds a
thread to the plane in force when its request or task began, so none sees
half of two versions. Django settings only configure; everything here is
shardstore, which a worker or a script could build alone. Tests point a
process at their own servers with ``use()``.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from shardstore import Store, Topology, metrics
from shardstore.cache import CachedStore, CachePool, LocalMemory, LocalPool, MemcachePool
from shardstore.control import documents
from shardstore.control.config_source import ConfigSource, NotPublished, Revision
from shardstore.control.follower import ConfigFollower, FollowerStatus
from shardstore.control.sources import open_source
from shardstore.exceptions import WritesInFlight
from shardstore.redis_shards import RedisShards, RedisTopology
from social.feed_sync import rebuild_recent
from social.feeds import HomeFeeds
from social.graph import FollowerGraph
from social.graph_sync import sync_graph
from social.notifications import Notifications

from .catalog import CACHE_POOLS as POOLS
from .catalog import CATALOG
from .process_wide import ProcessWide

log = logging.getLogger(__name__)


@dataclass
class DataPlane:
    store: CachedStore
    graph: FollowerGraph
    feeds: HomeFeeds
    notifications: Notifications
    versions: dict[str, int] = field(default_factory=dict)  # of each config document in force
    graph_ready: bool = False  # the embedded in-process graph is derived once per process

    def close(self) -> None:
        self.store.close()
        for pool in self.store.pools.values():
            close = getattr(pool, "close", None)
            if close is not None:
                close()
        self.graph.shards.close()


_follower: ConfigFollower | None = None
_local = threading.local()


# -- the config source -----------------------------------------------------------


def config_spec() -> str:
    """The config source of this deployment: ``PINBOARD_TOPOLOGY``, or the embedded directory."""
    config = settings.SHARDSTORE
    return str(config["CONFIG"] or config["CONFIG_DIR"])


def open_config() -> ConfigSource:
    """The config source, with the embedded default's shard map written on first use."""
    source = open_source(config_spec())
    if not settings.SHARDSTORE["CONFIG"]:
        try:
            source.current(documents.SHARDS)
        except NotPublished:
            embedded = embedded_topology().as_json()
            source.publish(
                documents.SHARDS, embedded, author="pinboard", reason="the embedded default"
            )
    return source


def embedded_topology() -> Topology:
    config = settings.SHARDSTORE
    return Topology.single_host(
        f"sqlite://{config['EMBEDDED_DIR']}", shard_count=config["EMBEDDED_SHARDS"]
    )


def topology_from_settings() -> Topology:
    """The shard map in force for this deployment (read from its config source)."""
    source = open_config()
    try:
        return Topology.from_json(source.current(documents.SHARDS).document)
    finally:
        source.close()


# -- building the plane from documents ----------------------------------------------


def redis_topology_from_settings() -> RedisTopology:
    config = settings.FOLLOWER_REDIS
    if config["TOPOLOGY_FILE"]:
        return RedisTopology.from_json(json.loads(Path(config["TOPOLOGY_FILE"]).read_text()))
    return RedisTopology.single(config["URL"])


def pools_from_settings() -> dict[str, CachePool]:
    """Pools on the memcached servers ``SHARDSTORE["CACHE_POOLS"]`` names, else in process
    memory."""
    return _pools({name: settings.SHARDSTORE["CACHE_POOLS"][name] for name in POOLS})


def pools_from_document(document: Mapping[str, Any]) -> dict[str, CachePool]:
    """Pools from a caches document (a pool of ``local`` only is process memory)."""
    return _pools(documents.cache_servers(document))


def _pools(servers_of: Mapping[str, list[str]]) -> dict[str, CachePool]:
    """The pools in process memory share a new one, as pools on one memcached server do."""
    memory = LocalMemory()
    return {
        name: MemcachePool(name, servers) if servers else LocalPool(name, memory)
        for name, servers in servers_of.items()
    }


def build(store: Store, pools: Mapping[str, CachePool], redis_topology: RedisTopology) -> DataPlane:
    shards = RedisShards(redis_topology)
    return DataPlane(
        CachedStore(store, pools), FollowerGraph(shards), HomeFeeds(shards), Notifications(shards)
    )


def _plane_from_config() -> DataPlane:
    global _follower
    follower = ConfigFollower(open_config, settings.SHARDSTORE["MIRROR_DIR"], on_change=_swap)
    follower.start()
    shards = follower.current(documents.SHARDS)
    if shards is None:
        raise RuntimeError(f"no shard map at {config_spec()} and no local copy of one")
    store = Store(
        Topology.from_json(shards.document),
        catalog=CATALOG,
        backend_options=settings.SHARDSTORE["BACKEND_OPTIONS"],
    )
    store.refuse_writes_when(follower.lease)
    redis, caches = follower.current(documents.REDIS), follower.current(documents.CACHES)
    pools = pools_from_document(caches.document) if caches else pools_from_settings()
    redis_topology = (
        RedisTopology.from_json(redis.document) if redis else redis_topology_from_settings()
    )
    built = build(store, pools, redis_topology)
    built.versions = {r.name: r.version for r in (shards, redis, caches) if r is not None}
    _follower = follower
    atexit.register(stop_following)
    return built


def stop_following() -> None:
    """Withdraw this process from the config source's followers, at its exit. Otherwise
    its report would outlive it until its ZooKeeper session expires, and an operation that
    waits until every process follows a new map (a split's read-only window) would wait
    on a process that is gone."""
    global _follower
    follower, _follower = _follower, None
    if follower is not None:
        follower.close()


def _swap(revision: Revision) -> None:
    """A new version of a document: build what it changes and swap the plane whole."""
    with _planes.lock:
        current = _planes.current
        if current is None:
            return
        versions = {**current.versions, revision.name: revision.version}
        if revision.name == documents.SHARDS:
            # The store swaps its routing atomically; bound threads keep theirs.
            try:
                current.store.store.set_topology(Topology.from_json(revision.document))
            except WritesInFlight:  # in force all the same, but not to be reported
                _planes.current = replace(current, versions=versions)
                raise
            new = replace(current, versions=versions)
        elif revision.name == documents.REDIS:
            shards = RedisShards(RedisTopology.from_json(revision.document))
            graph, feeds, notes = FollowerGraph(shards), HomeFeeds(shards), Notifications(shards)
            new = replace(
                current,
                graph=graph,
                feeds=feeds,
                notifications=notes,
                versions=versions,
                graph_ready=False,
            )
        else:
            cached = CachedStore(current.store.store, pools_from_document(revision.document))
            new = replace(current, store=cached, versions=versions)
        _planes.current = new
    log.info("config %s version %s in force", revision.name, revision.version)


# -- the plane in force ---------------------------------------------------------------

#: The plane in force, built from the config on first use and swapped whole by ``_swap``.
_planes = ProcessWide(_plane_from_config)


def plane() -> DataPlane:
    """The plane this thread works on: the one it is bound to, or the one in force."""
    bound_to: DataPlane | None = getattr(_local, "plane", None)
    if bound_to is not None:
        return bound_to
    return _planes.get()


def use(new: DataPlane | None) -> DataPlane | None:
    """Swap the process's data plane (tests); returns the previous one."""
    return _planes.use(new)


def follower_status() -> FollowerStatus | None:
    """Where this process's config comes from, and whether it answers (None: set by use())."""
    return _follower.status() if _follower is not None else None


def bind() -> Callable[[], None]:
    """Bind this thread to the plane in force (and its shard map); returns the unbind."""
    if getattr(_local, "plane", None) is not None:
        return lambda: None  # already bound: the outer binding holds
    current = plane()
    metrics.config_served(current.versions)
    routing = current.store.pinned()
    routing.__enter__()
    _local.plane = current

    def unbind() -> None:
        _local.plane = None
        routing.__exit__(None, None, None)

    return unbind


@contextmanager
def bound() -> Iterator[DataPlane]:
    """This thread bound to the plane in force for the block (``bind()``)."""
    unbind = bind()
    try:
        yield plane()
    finally:
        unbind()


class DataPlaneMiddleware:
    """Each request runs on one version of the config, from its first query to its last."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with bound():
            return self.get_response(request)


def cached_store() -> CachedStore:
    """The shard store behind its cache pools (same API as shardstore.Store)."""
    return plane().store


def get_graph() -> FollowerGraph:
    return _with_graph().graph


def get_feeds() -> HomeFeeds:
    return _with_graph().feeds


def get_notifications() -> Notifications:
    """Pinners' notifications, on the Redis instances of the follower graph."""
    return plane().notifications


def _with_graph() -> DataPlane:
    current = plane()
    if not current.graph_ready:
        with _planes.lock:
            if not current.graph_ready:
                instances = current.graph.shards.topology.instances.values()
                if all(url.startswith("memory://") for url in instances):
                    # The embedded in-process Redis starts empty in every process: derive
                    # the follower graph and the newest pins from MySQL, their source of
                    # truth (feeds rebuild on each pinner's next visit).
                    sync_graph(current.store.store, current.graph, wipe=True)
                    rebuild_recent(current.store.store, current.feeds)
                current.graph_ready = True
    return current
