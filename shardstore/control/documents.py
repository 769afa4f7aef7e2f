"""The three documents that say where data lives, and how each is validated.

* ``shards``: the MySQL shard map (``shardstore.topology.Topology``);
* ``redis``: the Redis virtual-shard map (``shardstore.redis_shards.RedisTopology``);
* ``caches``: the memcached pools' server lists::

      {"version": 4, "pools": {"objects": ["10.0.2.1:11211"], "lists": [...]}}

  (a server named ``local`` is process memory: the embedded default only). Which
  pools a deployment has is its catalog's to say (each object type's ``pool``, and
  ``lists``): a user of the library declares them once with ``require_pools``, and a
  caches document without one of them is refused.

Every document carries its ``version``; a config source sets it when it
publishes. ``validate`` is the one gate before a document is published: an
invalid one is refused with the reason and never reaches a process; a valid one is
published in ``current_form``, and every version read back is given in it too. A shard map
holds no password (each process logs in with a login of its own, kept apart from
the documents, which are copied to every process and kept in their history);
``masked`` is what a page, a form or a journal shows of an address or a document.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

from .. import replicas
from ..exceptions import InvalidTopology
from ..redis_shards import RedisTopology
from ..topology import Topology

SHARDS, REDIS, CACHES = "shards", "redis", "caches"
NAMES = (SHARDS, REDIS, CACHES)
#: The pools a caches document must name: those ``require_pools`` declared.
_REQUIRED_POOLS: dict[str, None] = {}
LOCAL_SERVER = "local"
#: The ``user:password@`` of an address (``scheme://user:password@host``), wherever it is.
_USERINFO_PASSWORD = re.compile(r"(?P<user>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*):[^\s/@]*@")
T = TypeVar("T")


def masked(value: T) -> T:
    """``value`` (an address, a text, a document) with the password of every address in it
    replaced by ``****``: what a page, a form or a journal entry may show."""
    if isinstance(value, str):
        return _USERINFO_PASSWORD.sub(r"\g<user>:****@", value)  # type: ignore[return-value]
    if isinstance(value, Mapping):
        return {key: masked(item) for key, item in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [masked(item) for item in value]  # type: ignore[return-value]
    if isinstance(value, tuple):
        return tuple(masked(item) for item in value)  # type: ignore[return-value]
    return value


def require_pools(names: Iterable[str]) -> None:
    """Declare pools every caches document must name (a site's, once, at import: the
    pools its catalog's ``CachedStore`` needs). Declaring one twice is harmless."""
    _REQUIRED_POOLS.update(dict.fromkeys(names))


def required_pools() -> tuple[str, ...]:
    """The pools declared so far, in the order they were declared."""
    return tuple(_REQUIRED_POOLS)


def _check_shards(document: Mapping[str, Any]) -> None:
    topology = Topology.from_json(document)
    for name, address in topology.hosts.items():
        try:
            password = urlsplit(address).password
        except ValueError:  # a malformed port: the backend says so when it connects
            password = None
        if password is not None or _USERINFO_PASSWORD.search(address):
            raise InvalidTopology(
                f"shards: host {name}: the address holds a password; a shard map holds none"
                " (each process logs in to its hosts with a login of its own)"
            )


def _check_caches(document: Mapping[str, Any]) -> None:
    unknown = set(document) - {"version", "pools"}
    if unknown:
        raise InvalidTopology(f"caches: unknown keys: {', '.join(sorted(unknown))}")
    pools = document.get("pools")
    if not isinstance(pools, Mapping):
        raise InvalidTopology("caches: pools must be an object of pool name -> servers")
    missing = [name for name in _REQUIRED_POOLS if name not in pools]
    if missing:
        raise InvalidTopology(f"caches: pools {', '.join(missing)} are missing")
    for name, servers in pools.items():
        if not isinstance(servers, list) or not servers:
            raise InvalidTopology(f"caches: pool {name} has no server")
        for server in servers:
            if server == LOCAL_SERVER:
                continue
            host, _, port = str(server).rpartition(":")
            if not isinstance(server, str) or not host or not port.isdigit():
                raise InvalidTopology(f"caches: pool {name}: {server!r} is not host:port")
        if len(set(servers)) != len(servers):
            raise InvalidTopology(f"caches: pool {name} names a server twice")


_VALIDATORS: dict[str, Callable[[Mapping[str, Any]], object]] = {
    SHARDS: _check_shards,
    REDIS: RedisTopology.from_json,
    CACHES: _check_caches,
}


def check_name(name: str) -> str:
    if name not in _VALIDATORS:
        raise InvalidTopology(f"no config document named {name!r} (one of {', '.join(NAMES)})")
    return name


def validate(name: str, document: object) -> dict[str, Any]:
    """The document as a plain dict, if it is a valid ``name`` document; InvalidTopology
    with the reason otherwise."""
    check_name(name)
    if not isinstance(document, Mapping):
        raise InvalidTopology(f"{name}: a document must be a JSON object")
    version = document.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise InvalidTopology(f"{name}: version must be a non-negative integer")
    _VALIDATORS[name](document)
    copy: dict[str, Any] = json.loads(json.dumps(current_form(name, document)))  # deep, JSON
    return copy


def current_form(name: str, document: Mapping[str, Any]) -> dict[str, Any]:
    """``document`` as this release writes it: a shard map's ranges name their
    ``replicas`` in a list, not one ``replica`` or ``slave`` as older releases wrote (all
    are read)."""
    return replicas.current_form(document) if name == SHARDS else dict(document)


def diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """A unified diff of two documents, key-sorted and indented, one line per value."""
    before = json.dumps(old, indent=2, sort_keys=True).splitlines()
    after = json.dumps(new, indent=2, sort_keys=True).splitlines()
    old_label = f"version {old.get('version')}"
    new_label = f"version {new.get('version')}"
    return "\n".join(difflib.unified_diff(before, after, old_label, new_label, lineterm=""))


def cache_servers(document: Mapping[str, Any]) -> dict[str, list[str]]:
    """``{pool: servers}`` of a caches document (empty list: process memory)."""
    return {
        name: [s for s in servers if s != LOCAL_SERVER]
        for name, servers in document["pools"].items()
    }
