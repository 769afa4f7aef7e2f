"""IDs as the site sees them: parse what a client sent, or say 404."""

from __future__ import annotations

from shardstore import InvalidId, UnknownShard, shard_of

from .catalog import CATALOG
from .data_plane import cached_store
from .errors import NotFoundError


def parse_id(value: object, type_name: str) -> int:
    """``value`` as an ID of ``type_name``; NotFoundError if malformed or of another type."""
    if not isinstance(value, (int, str)) or isinstance(value, bool):
        raise NotFoundError(f"no such {type_name}")
    try:
        object_id = CATALOG.expect(value, type_name)
        cached_store().topology.range_of(shard_of(object_id))  # a shard no host serves: no object
    except (InvalidId, UnknownShard):
        raise NotFoundError(f"no such {type_name}: {str(value)[:40]!r}") from None
    return object_id
