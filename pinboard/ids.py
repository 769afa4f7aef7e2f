"""IDs as the site sees them: parse what a client sent, or say 404."""

from __future__ import annotations

from shardstore import CATALOG, InvalidId

from .errors import NotFoundError


def parse_id(value: object, type_name: str) -> int:
    """``value`` as an ID of ``type_name``; NotFoundError if malformed or of another type."""
    if not isinstance(value, (int, str)) or isinstance(value, bool):
        raise NotFoundError(f"no such {type_name}")
    try:
        return CATALOG.expect(value, type_name)
    except InvalidId:
        raise NotFoundError(f"no such {type_name}: {str(value)[:40]!r}") from None
