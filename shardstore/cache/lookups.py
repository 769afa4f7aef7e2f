"""The cached view of a lookup table (key -> ID): one value per key, ``null`` when absent."""

from __future__ import annotations

import hashlib

from ..lookups import LookupTable
from ..selects import Selects
from .pools import CachePool
from .reads import Read
from .readthrough import DEFAULT_FILLS, Fills, Through, forgetting, invalidate, key_for
from .tables import ABSENT, VERSION


class CachedLookup:
    """Lookups (key -> ID) cached under ``lookup:<name>:<key>``; ``null`` when absent."""

    def __init__(self, table: LookupTable, pool: CachePool, fills: Fills = DEFAULT_FILLS) -> None:
        self._table = table
        self._pool = pool
        self._fills = fills
        self.lookup = table.lookup

    def key(self, key: str) -> str:
        # memcached keys are at most 250 bytes of no spaces: hash the normalized key.
        digest = hashlib.sha1(self._table.key(key).encode()).hexdigest()
        return key_for("lookup:%s:%s", VERSION, self.lookup.name, digest)

    def get(self, key: str) -> int | None:
        return self.reading(key).run()

    def reading(self, key: str) -> Read[int | None]:
        """``get`` as a read to make with others (``read_together``)."""
        cache_key = self.key(key)

        def load(missing: list[str]) -> Selects[dict[str, bytes]]:
            return self._table.selecting(key).then(
                lambda found: {cache_key: str(found).encode() if found is not None else ABSENT}
            )

        def shape(values: dict[str, bytes]) -> int | None:
            value = values[cache_key]
            return None if value == ABSENT else int(value)

        return Read(Through(self._pool, [cache_key], load, fills=self._fills), shape)

    def insert(self, key: str, object_id: int) -> None:
        with forgetting(lambda: invalidate(self._pool, [self.key(key)])):
            self._table.insert(key, object_id)

    def delete(self, key: str, object_id: int) -> bool:
        with forgetting(lambda: invalidate(self._pool, [self.key(key)])):
            return self._table.delete(key, object_id)

    def shard_of(self, key: str) -> int:
        return self._table.shard_of(key)
