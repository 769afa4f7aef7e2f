"""How a range of the shard map names its replicas.

This release writes a list, ``"replicas": ["db1b", "db1c"]`` (left out when there is
none). Older releases named one: ``replica``, and before that ``slave``. Such an entry
still loads, as a list of one, and ``current_form`` rewrites a document the way this
release writes it, so that an old version and a new one compare (and diff) by what they
say. An entry naming its replicas under two keys is refused, unless the two older keys
name the same host.

A commit on a range's master waits for one named replica's acknowledgement (semi-sync:
MariaDB releases it on the first), so a range with ``WANTED`` replicas loses no write when
one of them dies. A range with fewer still works, and ``pairs`` reports it under-replicated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .exceptions import InvalidTopology

KEY = "replicas"
OLD_KEYS = ("replica", "slave")  # what older releases wrote, newest first
#: The replicas a range should have: one may die and another still acknowledges.
WANTED = 2
#: At most this many per range (each one is a stream its master sends).
MOST = 8


def replicas_of(entry: Mapping[str, Any]) -> list[str]:
    """The replicas a range entry names, in its order, whichever release wrote it."""
    if KEY in entry:
        return [str(name) for name in entry[KEY]]
    for key in OLD_KEYS:
        if entry.get(key) is not None:
            return [str(entry[key])]
    return []


def with_replicas(entry: Mapping[str, Any], replicas: Iterable[str]) -> dict[str, Any]:
    """``entry`` naming ``replicas`` as this release writes it (any older key dropped)."""
    named = list(dict.fromkeys(replicas))
    kept = {k: v for k, v in entry.items() if k != KEY and k not in OLD_KEYS}
    return {**kept, KEY: named} if named else kept


def current_form(document: Mapping[str, Any]) -> dict[str, Any]:
    """A shard map document with each range's replicas as this release writes them. An
    entry naming them in two ways is left as it is, for validation to refuse."""
    ranges = document.get("ranges")
    if not isinstance(ranges, list):
        return dict(document)
    return {**document, "ranges": [_rewritten(entry) for entry in ranges]}


def _rewritten(entry: object) -> object:
    if not isinstance(entry, Mapping) or not any(key in entry for key in OLD_KEYS):
        return entry
    try:
        return with_replicas(entry, parse(entry, "", hosts=None))
    except InvalidTopology:
        return entry


def parse(entry: Mapping[str, Any], where: str, *, hosts: Mapping[str, str] | None) -> list[str]:
    """The replicas a range entry names, checked (``hosts``: the map's, to check names
    against; ``where`` starts each refusal)."""
    given = [key for key in (KEY, *OLD_KEYS) if entry.get(key) is not None]
    if KEY in given and len(given) > 1:
        raise InvalidTopology(f"{where}: replicas named under {' and '.join(given)} (name them once, as replicas)")  # fmt: skip
    if len(given) == 2 and entry[OLD_KEYS[0]] != entry[OLD_KEYS[1]]:
        raise InvalidTopology(
            f"{where}: replica {entry[OLD_KEYS[0]]!r} and slave {entry[OLD_KEYS[1]]!r} differ"
            " (slave and replica are older names: name the replicas once, as replicas)"
        )
    if KEY in given:
        named = entry[KEY]
        if not isinstance(named, list) or not all(isinstance(n, str) for n in named):
            raise InvalidTopology(f"{where}: replicas must be a list of host names")
        if len(set(named)) != len(named):
            raise InvalidTopology(f"{where}: a replica is named twice")
        if len(named) > MOST:
            raise InvalidTopology(f"{where}: at most {MOST} replicas")
    names = replicas_of(entry)
    for name in names:
        if hosts is not None and name not in hosts:
            raise InvalidTopology(f"{where}: unknown replica host {name!r}")
        if name == entry.get("master"):
            raise InvalidTopology(f"{where}: master {name} is also its own replica")
    return names
