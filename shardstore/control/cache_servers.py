"""Add a memcached server to a pool, or take one out.

Adding: the server must answer; it is flushed before the map names it, since
a server that was in a pool before may still hold values that writes made
elsewhere since then have made stale (a cache server joining a pool must
start empty). Then the caches document is published: every process swaps
its pools, and keys move to the new server by rendezvous hashing (a miss
each, read through again).

Removing: one publish; the keys the server held become misses elsewhere.
A pool keeps at least one server.
"""

from __future__ import annotations

from typing import Any

from ..exceptions import InvalidTopology
from . import documents
from .config_source import ConfigSource
from .plans import Plan, Step
from .publish import publish_step


def plan_cache_server(
    source: ConfigSource, *, pool: str, server: str, add: bool, author: str
) -> Plan:
    current = source.current(documents.CACHES)
    pools: dict[str, list[str]] = {k: list(v) for k, v in current.document["pools"].items()}
    if pool not in pools:
        raise InvalidTopology(f"no cache pool named {pool!r} (one of {', '.join(sorted(pools))})")
    if add == (server in pools[pool]):
        raise InvalidTopology(f"{server} is {'already' if add else 'not'} in pool {pool}")
    pools[pool] = [*pools[pool], server] if add else [s for s in pools[pool] if s != server]
    new = documents.validate(documents.CACHES, {**current.document, "pools": pools})
    verb = f"add {server} to" if add else f"remove {server} from"

    steps = []
    if add:
        check = f"check {server} answers, then empty it"
        steps.append(Step(check, (server,), lambda: _flush(server)))
    reason, change = f"{verb} cache pool {pool}", f"pool {pool} = {pools[pool]}"
    steps.append(
        publish_step(
            source, current, new, author=author, reason=reason, change=change, hosts=(server,)
        )
    )
    params = {"pool": pool, "server": server, "add": add}
    return Plan("cache-server", f"{verb} cache pool {pool}", steps, params)


def _flush(server: str) -> str:
    from pymemcache.client.base import Client

    host, _, port = server.rpartition(":")
    client: Any = Client((host, int(port)), connect_timeout=2, timeout=2)
    try:
        version = client.version()
        client.flush_all(noreply=False)
    finally:
        client.close()
    return f"memcached {version.decode() if isinstance(version, bytes) else version} emptied"
