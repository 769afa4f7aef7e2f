"""A process's data plane, without Django: the shard store behind its cache pools, the Redis
follower graph, home feeds and notifications, built from the config documents and kept
current as they change.

Where the documents come from (``PlaneSettings.config``): a config directory, a shard-map
file, or ``zk://hosts/root``; without one, the embedded default's directory, whose shard
map is written on first use (SQLite shards). A document the source does not hold comes
from the settings: the Redis map from its URL or file, the cache pools from their servers.

``Planes`` holds the process's plane: it builds it on first use (again after a fork),
follows the documents (``shardstore.control.follower``) and swaps each new version in
whole, between requests and tasks: ``bind()`` ties a thread to the plane in force when its
request or task began, so none sees half of two versions. A server process calls
``start()`` once, at its start: an in-process Redis (the embedded default's) starts empty
in every process, so the follower graph and the newest pins are derived from the store
there (``derive_in_process_redis``), not in the middle of a request.
"""

from __future__ import annotations

import atexit
import functools
import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from shardstore import Store, Topology, metrics
from shardstore.cache import CachedStore, CachePool, LocalMemory, LocalPool, MemcachePool
from shardstore.cache.readthrough import FILL_TTL
from shardstore.control import documents
from shardstore.control.config_source import ConfigSource, NotPublished, Revision
from shardstore.control.follower import ConfigFollower, FollowerStatus
from shardstore.control.sources import open_source
from shardstore.exceptions import WritesInFlight
from shardstore.redis_shards import Lease, RedisShards, RedisTopology
from social.feed_sync import rebuild_recent
from social.feeds import HomeFeeds
from social.graph import FollowerGraph
from social.graph_sync import sync_graph
from social.notifications import Notifications

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

    def close(self) -> None:
        self.store.close()
        for pool in self.store.pools.values():
            close = getattr(pool, "close", None)
            if close is not None:
                close()
        self.graph.shards.close()


@dataclass(frozen=True)
class PlaneSettings:
    """What a deployment says of its plane (the site's settings hand it in)."""

    config: str | None  # the config source; None: the embedded default
    config_dir: Path  # the embedded default's config directory
    embedded_dir: Path  # where the embedded default's SQLite shards live
    embedded_shards: int
    mirror_dir: Path  # the process's copy of the documents, to boot from if the source is down
    backend_options: Mapping[str, Any]
    cache_servers: Mapping[str, list[str]]  # memcached servers of each pool; none: in memory
    redis_url: str
    redis_topology_file: str | None  # a Redis map over several instances, else ``redis_url``
    cache_fill_seconds: int = FILL_TTL  # how long a value read through to MySQL stays cached

    @property
    def config_spec(self) -> str:
        """The config source of this deployment, or the embedded directory."""
        return str(self.config or self.config_dir)


# -- the config source -----------------------------------------------------------


def open_config(settings: PlaneSettings) -> ConfigSource:
    """The config source, with the embedded default's shard map written on first use."""
    source = open_source(settings.config_spec)
    if not settings.config:
        try:
            source.current(documents.SHARDS)
        except NotPublished:
            embedded = embedded_topology(settings).as_json()
            source.publish(
                documents.SHARDS, embedded, author="pinboard", reason="the embedded default"
            )
    return source


def embedded_topology(settings: PlaneSettings) -> Topology:
    return Topology.single_host(
        f"sqlite://{settings.embedded_dir}", shard_count=settings.embedded_shards
    )


def current_topology(settings: PlaneSettings) -> Topology:
    """The shard map in force for this deployment (read from its config source)."""
    source = open_config(settings)
    try:
        return Topology.from_json(source.current(documents.SHARDS).document)
    finally:
        source.close()


# -- building a plane -------------------------------------------------------------------


def redis_topology_of(settings: PlaneSettings) -> RedisTopology:
    if settings.redis_topology_file:
        return RedisTopology.from_json(json.loads(Path(settings.redis_topology_file).read_text()))
    return RedisTopology.single(settings.redis_url)


def pools_on(servers_of: Mapping[str, list[str]]) -> dict[str, CachePool]:
    """Pools on the memcached servers named, else in process memory: those share a new
    one, as pools on one memcached server do."""
    memory = LocalMemory()
    return {
        name: MemcachePool(name, servers) if servers else LocalPool(name, memory)
        for name, servers in servers_of.items()
    }


def pools_from_document(document: Mapping[str, Any]) -> dict[str, CachePool]:
    """Pools from a caches document (a pool of ``local`` only is process memory)."""
    return pools_on(documents.cache_servers(document))


def build(
    store: Store,
    pools: Mapping[str, CachePool],
    redis_topology: RedisTopology,
    *,
    lease: Lease | None = None,
    fill_seconds: int = FILL_TTL,
) -> DataPlane:
    """The plane over ``store``; ``lease`` refuses its Redis writes (``RedisShards``) and
    withholds its cache fills (``CachedStore``), which expire after ``fill_seconds``."""
    shards = RedisShards(redis_topology, lease=lease)
    cached = CachedStore(store, pools, lease=lease, fill_seconds=fill_seconds)
    return DataPlane(cached, FollowerGraph(shards), HomeFeeds(shards), Notifications(shards))


def derive_in_process_redis(plane: DataPlane) -> None:
    """On an in-process Redis, which starts empty in every process, the follower graph and
    the newest pins derived from MySQL, their source of truth (home feeds rebuild on each
    pinner's next visit); on a real Redis, nothing."""
    instances = plane.graph.shards.topology.instances.values()
    if all(url.startswith("memory://") for url in instances):
        sync_graph(plane.store.store, plane.graph, wipe=True)
        rebuild_recent(plane.store.store, plane.feeds)


# -- the process's plane ------------------------------------------------------------------


class Planes:
    """The process's plane in force: built from the config on first use (``settings()``
    is read then), swapped whole as the documents change, and bound to threads."""

    def __init__(self, settings: Callable[[], PlaneSettings]) -> None:
        self._settings = settings
        self._follower: ConfigFollower | None = None
        self._held = ProcessWide(self._from_config)
        self._local = threading.local()

    def _from_config(self) -> DataPlane:
        settings = self._settings()
        follower = ConfigFollower(
            functools.partial(open_config, settings), settings.mirror_dir, on_change=self._swap
        )
        follower.start()
        shards = follower.current(documents.SHARDS)
        if shards is None:
            raise RuntimeError(f"no shard map at {settings.config_spec} and no local copy of one")
        store = Store(
            Topology.from_json(shards.document),
            catalog=CATALOG,
            backend_options=dict(settings.backend_options),
        )
        redis, caches = follower.current(documents.REDIS), follower.current(documents.CACHES)
        pools = pools_from_document(caches.document) if caches else pools_on(settings.cache_servers)
        redis_topology = RedisTopology.from_json(redis.document) if redis else None
        # Cut off past its lease, the process writes MySQL on by its last map (every move
        # of a shard fences it in MySQL), but not Redis, where a move has no other fence;
        # and it fills no cache: what it reads by a map it cannot confirm stays its own.
        built = build(
            store,
            pools,
            redis_topology or redis_topology_of(settings),
            lease=follower.lease,
            fill_seconds=settings.cache_fill_seconds,
        )
        built.versions = {r.name: r.version for r in (shards, redis, caches) if r is not None}
        self._follower = follower
        atexit.register(self.stop_following)
        return built

    def start(self) -> DataPlane:
        """A server process's start (a web process's, a worker's): its plane built now, so
        it follows the config from its start rather than its first request, and its
        in-process Redis, if it has one, derived from the store."""
        started = self._held.get()
        derive_in_process_redis(started)
        return started

    def stop_following(self) -> None:
        """Withdraw this process from the config source's followers, at its exit. Otherwise
        its report would outlive it until its ZooKeeper session expires, and an operation
        that waits until every process follows a new map (a split's read-only window) would
        wait on a process that is gone."""
        follower, self._follower = self._follower, None
        if follower is not None:
            follower.close()

    def _swap(self, revision: Revision) -> None:
        """A new version of a document: build what it changes and swap the plane whole."""
        with self._held.lock:
            current = self._held.current
            if current is None:
                return
            versions = {**current.versions, revision.name: revision.version}
            if revision.name == documents.SHARDS:
                # The store swaps its routing atomically; bound threads keep theirs.
                try:
                    current.store.store.set_topology(Topology.from_json(revision.document))
                except WritesInFlight:  # in force all the same, but not to be reported
                    self._held.current = replace(current, versions=versions)
                    raise
                new = replace(current, versions=versions)
            elif revision.name == documents.REDIS:
                shards = RedisShards(
                    RedisTopology.from_json(revision.document), lease=current.graph.shards.lease
                )
                graph, feeds, notes = (
                    FollowerGraph(shards),
                    HomeFeeds(shards),
                    Notifications(shards),
                )
                new = replace(
                    current, graph=graph, feeds=feeds, notifications=notes, versions=versions
                )
                derive_in_process_redis(new)
            else:
                fills = current.store.fills  # the lease and the expiry stay
                cached = CachedStore(
                    current.store.store,
                    pools_from_document(revision.document),
                    lease=fills.cut_off,
                    fill_seconds=fills.seconds,
                )
                new = replace(current, store=cached, versions=versions)
            self._held.current = new
        log.info("config %s version %s in force", revision.name, revision.version)

    def in_force(self) -> DataPlane:
        """The plane in force in the process (a bound thread may still work on an older)."""
        return self._held.get()

    def plane(self) -> DataPlane:
        """The plane this thread works on: the one it is bound to, or the one in force."""
        bound_to: DataPlane | None = getattr(self._local, "plane", None)
        if bound_to is not None:
            return bound_to
        return self._held.get()

    def use(self, new: DataPlane | None) -> DataPlane | None:
        """Swap the process's data plane (tests); returns the previous one."""
        return self._held.use(new)

    def follower_status(self) -> FollowerStatus | None:
        """Where this process's config comes from, and whether it answers (None: set by
        ``use()``)."""
        return self._follower.status() if self._follower is not None else None

    def bind(self) -> Callable[[], None]:
        """Bind this thread to the plane in force (and its shard map); returns the unbind."""
        if getattr(self._local, "plane", None) is not None:
            return lambda: None  # already bound: the outer binding holds
        current = self.plane()
        metrics.config_served(current.versions)
        routing = current.store.pinned()
        routing.__enter__()
        self._local.plane = current

        def unbind() -> None:
            self._local.plane = None
            routing.__exit__(None, None, None)

        return unbind

    @contextmanager
    def bound(self) -> Iterator[DataPlane]:
        """This thread bound to the plane in force for the block (``bind()``)."""
        unbind = self.bind()
        try:
            yield self.plane()
        finally:
            unbind()
