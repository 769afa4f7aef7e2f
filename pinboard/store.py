"""The site's one shardstore Store, built from settings on first use."""

from __future__ import annotations

import threading

from django.conf import settings

from shardstore import Store, Topology

_store: Store | None = None
_lock = threading.Lock()


def topology_from_settings() -> Topology:
    config = settings.SHARDSTORE
    if config["TOPOLOGY_FILE"]:
        return Topology.load(config["TOPOLOGY_FILE"])
    return Topology.single_host(
        f"sqlite://{config['EMBEDDED_DIR']}", shard_count=config["EMBEDDED_SHARDS"]
    )


def get_store() -> Store:
    """The process-wide Store (thread-safe: sessions come from per-host pools)."""
    global _store
    if _store is None:
        with _lock:
            if _store is None:
                _store = Store(
                    topology_from_settings(), backend_options=settings.SHARDSTORE["BACKEND_OPTIONS"]
                )
    return _store
