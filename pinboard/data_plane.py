"""The site's data plane: the process's ``plane.Planes``, configured by the Django settings,
and what the site's code asks it for (``cached_store()``, ``get_graph()``, ...).

Where the documents come from (``settings.SHARDSTORE["CONFIG"]``, from
``PINBOARD_TOPOLOGY``): a config directory, a shard-map file, or
``zk://hosts/root``. The embedded default is the directory ``var/config/``,
whose shard map is written on first use (SQLite shards under ``var/shards/``).
A document the source does not hold comes from settings: the Redis map from
``PINBOARD_REDIS_URL`` / ``PINBOARD_REDIS_TOPOLOGY``, the cache pools from
``SHARDSTORE["CACHE_POOLS"]`` (``PINBOARD_MEMCACHED``); how long a cache fill lives from
``SHARDSTORE["CACHE_FILL_SECONDS"]`` (``PINBOARD_CACHE_FILL_SECONDS``).

The plane is built on first use, or by ``start()`` at a server process's start
(``wsgi.py``, Celery's signals), which also derives the embedded default's
in-process Redis from the store. ``bound()`` (``plane_middleware`` around each request,
Celery's signals around each task) binds a thread to the plane in force when its
request or task began. Django settings only configure: ``plane.py`` is shardstore
and the social model alone, which a worker or a script could build without Django.
Tests point a process at their own servers with ``use()``.
"""

from __future__ import annotations

from django.conf import settings

from shardstore import Topology
from shardstore.cache import CachedStore
from shardstore.control.config_source import ConfigSource
from social.feeds import HomeFeeds
from social.graph import FollowerGraph
from social.notifications import Notifications

from . import plane as planes
from .catalog import CACHE_POOLS


def plane_settings() -> planes.PlaneSettings:
    """The plane's settings, read when the plane is built (a test may override them)."""
    config, redis = settings.SHARDSTORE, settings.FOLLOWER_REDIS
    return planes.PlaneSettings(
        config=str(config["CONFIG"]) if config["CONFIG"] else None,
        config_dir=config["CONFIG_DIR"],
        embedded_dir=config["EMBEDDED_DIR"],
        embedded_shards=config["EMBEDDED_SHARDS"],
        mirror_dir=config["MIRROR_DIR"],
        backend_options=config["BACKEND_OPTIONS"],
        cache_servers={name: config["CACHE_POOLS"][name] for name in CACHE_POOLS},
        redis_url=redis["URL"],
        redis_topology_file=redis["TOPOLOGY_FILE"],
        cache_fill_seconds=config["CACHE_FILL_SECONDS"],
    )


#: The process's plane, built from the config on first use and swapped whole as it changes.
PLANES = planes.Planes(plane_settings)

start = PLANES.start
plane = PLANES.plane
bind = PLANES.bind
bound = PLANES.bound
use = PLANES.use
follower_status = PLANES.follower_status
stop_following = PLANES.stop_following


def open_config() -> ConfigSource:
    """This deployment's config source (the embedded default's shard map written on first
    use)."""
    return planes.open_config(plane_settings())


def topology_from_settings() -> Topology:
    """The shard map in force for this deployment (read from its config source)."""
    return planes.current_topology(plane_settings())


def cached_store() -> CachedStore:
    """The shard store behind its cache pools (same API as shardstore.Store)."""
    return plane().store


def get_graph() -> FollowerGraph:
    return plane().graph


def get_feeds() -> HomeFeeds:
    return plane().feeds


def get_notifications() -> Notifications:
    """Pinners' notifications, on the Redis instances of the follower graph."""
    return plane().notifications
