"""Mod-shard lookup tables: a unique external key (a login, an email address) -> an object ID.

The key is normalized (case-folded by default), hashed to one of 4096 buckets
(``modshard.bucket``), and the bucket routed to a shard and its host. The key
is the table's primary key, so of two concurrent inserts exactly one wins.
"""

from __future__ import annotations

from .backends import UniqueViolation
from .catalog import Lookup
from .exceptions import DuplicateKey, InvalidKey
from .interface import ShardAccess
from .modshard import bucket
from .selects import Select, Selects

#: The longest key, in characters (the MySQL column is VARCHAR(255)).
MAX_KEY_LENGTH = 255


class LookupTable:
    def __init__(self, store: ShardAccess, lookup: Lookup) -> None:
        self._store = store
        self.lookup = lookup
        table = lookup.table
        self._insert = f"INSERT INTO {{db}}.{table} (lookup_key, object_id) VALUES (%s, %s)"
        self._select = f"SELECT object_id FROM {{db}}.{table} WHERE lookup_key = %s"
        self._delete = f"DELETE FROM {{db}}.{table} WHERE lookup_key = %s AND object_id = %s"

    def key(self, key: str) -> str:
        """The normalized form of ``key`` (what is stored and hashed)."""
        if not isinstance(key, str):
            raise InvalidKey(f"{self.lookup.name} must be a string")
        normalized = self.lookup.normalize(key.strip())
        if not normalized.isprintable() or not _encodable(normalized):
            raise InvalidKey(f"{self.lookup.name} must be printable text")
        if not normalized or len(normalized) > MAX_KEY_LENGTH:
            raise InvalidKey(f"{self.lookup.name} must be 1..{MAX_KEY_LENGTH} characters")
        return normalized

    def shard_of(self, key: str) -> int:
        """The shard that holds ``key``: md5 bucket, then the topology's bucket map."""
        return self._store.topology.lookup_shard(bucket(self.key(key)))

    def insert(self, key: str, object_id: int) -> None:
        """Claim ``key`` for ``object_id``; DuplicateKey (and no change) if it is taken."""
        normalized = self.key(key)
        object_id = self._store.catalog.expect(object_id, self.lookup.object_type)
        try:
            with self._store.session(self.shard_of(normalized)) as session:
                session.execute(self._insert, (normalized, object_id))
        except UniqueViolation:
            raise DuplicateKey(self.lookup.name, normalized) from None

    def get(self, key: str) -> int | None:
        """The ID ``key`` maps to, or None."""
        return self.selecting(key).run()

    def selecting(self, key: str) -> Selects[int | None]:
        """``get`` as a SELECT to run with others (``selects.run_together``)."""
        normalized = self.key(key)
        select = Select(self.shard_of(normalized), self._select, (normalized,))
        return Selects(
            self._store, [select], lambda found: int(found[0][0][0]) if found[0] else None
        )

    def delete(self, key: str, object_id: int) -> bool:
        """Release ``key`` if it still maps to ``object_id``. Returns whether it did."""
        normalized = self.key(key)
        with self._store.session(self.shard_of(normalized)) as session:
            return bool(session.execute(self._delete, (normalized, int(object_id))) > 0)


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True
