"""64-bit object IDs: 2 reserved bits | 16 shard | 10 type | 36 local.

``id = shard << 46 | type << 36 | local``. The shard says where the row lives,
the type which table holds it, the local id which row. IDs are immutable, so
data never moves between shards; whole shards move between hosts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

from .exceptions import InvalidId

SHARD_BITS = 16
TYPE_BITS = 10
LOCAL_BITS = 36

SHARD_SHIFT = TYPE_BITS + LOCAL_BITS  # 46
TYPE_SHIFT = LOCAL_BITS  # 36

MAX_SHARD_ID = (1 << SHARD_BITS) - 1
MAX_TYPE_ID = (1 << TYPE_BITS) - 1
MAX_LOCAL_ID = (1 << LOCAL_BITS) - 1
MAX_OBJECT_ID = (1 << (SHARD_BITS + TYPE_BITS + LOCAL_BITS)) - 1  # reserved bits zero


class ObjectId(NamedTuple):
    """The three fields of an object ID."""

    shard_id: int
    type_id: int
    local_id: int


def _field(name: str, value: object, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidId(f"{name} must be an int, not {type(value).__name__}")
    if not 0 <= value <= maximum:
        raise InvalidId(f"{name} {value} is out of range 0..{maximum}")
    return value


def compose(shard_id: int, type_id: int, local_id: int) -> int:
    """Pack shard, type and local id into one 64-bit ID."""
    shard_id = _field("shard_id", shard_id, MAX_SHARD_ID)
    type_id = _field("type_id", type_id, MAX_TYPE_ID)
    local_id = _field("local_id", local_id, MAX_LOCAL_ID)
    return shard_id << SHARD_SHIFT | type_id << TYPE_SHIFT | local_id


def parse(object_id: int | str) -> int:
    """An ID as an int, from an int or its canonical decimal string (as IDs travel in URLs
    and JSON): ASCII digits only, no sign, spaces or leading zeros, so each ID has exactly
    one spelling (``/item/0123/`` is not another address of item 123)."""
    if isinstance(object_id, str):
        if not _is_canonical_decimal(object_id):
            raise InvalidId(f"object_id {object_id[:40]!r} is not a decimal number")
        object_id = int(object_id)
    if isinstance(object_id, bool) or not isinstance(object_id, int):
        raise InvalidId(f"object_id must be an int, not {type(object_id).__name__}")
    if object_id < 0:
        raise InvalidId(f"object_id {object_id} is negative")
    if object_id > MAX_OBJECT_ID:
        raise InvalidId(f"object_id {object_id} has its reserved bits set (or exceeds 64 bits)")
    return object_id


def _is_canonical_decimal(text: str) -> bool:
    # Checked before int(), which also takes signs, spaces, underscores and non-ASCII digits.
    if not 0 < len(text) <= 20 or not (text.isascii() and text.isdigit()):
        return False
    return text == "0" or text[0] != "0"


def decompose(object_id: int | str) -> ObjectId:
    """Split an ID into its shard, type and local id."""
    object_id = parse(object_id)
    return ObjectId(
        shard_id=object_id >> SHARD_SHIFT & MAX_SHARD_ID,
        type_id=object_id >> TYPE_SHIFT & MAX_TYPE_ID,
        local_id=object_id & MAX_LOCAL_ID,
    )


def shard_of(object_id: int) -> int:
    """The shard an ID lives on (no validation: for IDs already checked)."""
    return object_id >> SHARD_SHIFT & MAX_SHARD_ID


def group_by_shard(object_ids: Iterable[int]) -> dict[int, list[int]]:
    """IDs grouped by shard, each group in first-seen order, repeats dropped."""
    groups: dict[int, list[int]] = defaultdict(list)
    seen = set()
    for object_id in object_ids:
        if object_id not in seen:
            seen.add(object_id)
            groups[shard_of(object_id)].append(object_id)
    return dict(groups)
