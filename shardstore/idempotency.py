"""Idempotency keys: a caller that sends a create again (it saw no answer, or an error)
gets the object its first attempt made, not a second one.

A key is a client's string, one sender's (the account that sends it), naming one request
(its ``fingerprint``: a hash the caller makes of what was asked). Two tables on every
shard, made by ``init_shards`` as every other table:

* ``idempotency_claims``, on the sender's shard: the request a key was first sent with.
  Written first, on its own (``claim``): the key sent again with another request is
  refused (``KeyReused``) whichever shard that request's object would have gone to.
* ``idempotency_keys``, on the object's shard: the key -> the object's ID, inserted in
  the same transaction as the object (``ObjectTable.create(..., key=)``), so both are
  committed or neither. A commit its caller gave up on (the read timeout, then the
  session KILLed on the server) may land all the same; its key row lands with it, and a
  retry finds the object (``created``). If the first attempt's transaction is still
  open, the retry's insert of the key row waits for its lock, then meets the committed
  row: the retry is rolled back, its own object with it, and ``AlreadyCreated`` names
  the first's object (or, had the first rolled back, the retry's insert goes through).

Rows expire after ``IdempotencyKey.seconds`` (a day by default): an expired row counts
as absent, is taken over when its key is used again, and is deleted by ``expire`` (the
``idempotency-expire`` job, shard by shard). No cache sees these tables: a cached
"absent" would hide a commit that landed late.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .backends import UniqueViolation
from .exceptions import AlreadyCreated, InvalidKey, KeyReused, WriteConflict
from .ids import parse, shard_of

if TYPE_CHECKING:
    from .backends import Session

#: The longest key, in characters (the columns are VARCHAR(255) of ASCII).
MAX_KEY_LENGTH = 255
#: The longest fingerprint (a SHA-256 in hex is 64 characters).
MAX_FINGERPRINT_LENGTH = 64
DAY = 24 * 3600

#: The tables every shard holds for the keys (``backends``' schemas create them).
TABLES = ("idempotency_claims", "idempotency_keys")


T = TypeVar("T")


class Shards(Protocol):
    """What the keys need of their store: ``interface.ShardAccess``'s sessions and
    transactions (named here, as interface.py names this module's types)."""

    def session(self, shard_id: int, *, write: bool = False) -> Session: ...

    def transaction(
        self, shard_id: int, work: Callable[[Session], T], *, attempts: int = 5
    ) -> T: ...


def check_key(key: object) -> str:
    """``key`` if it can be one: 1 to 255 printable ASCII characters (InvalidKey if not)."""
    if not isinstance(key, str) or not (key.isascii() and key.isprintable()):
        raise InvalidKey("an idempotency key must be printable ASCII text")
    if not 1 <= len(key) <= MAX_KEY_LENGTH:
        raise InvalidKey(f"an idempotency key must be 1 to {MAX_KEY_LENGTH} characters")
    return key


@dataclass(frozen=True)
class IdempotencyKey:
    """A key as its sender sent it with one request."""

    sender_id: int  # whose key: keys of two senders never meet
    key: str
    fingerprint: str  # of the request the key was sent with
    seconds: int = DAY  # how long the key is kept

    def __post_init__(self) -> None:
        parse(self.sender_id)
        check_key(self.key)
        fingerprint = self.fingerprint
        if not isinstance(fingerprint, str) or not (fingerprint.isascii() and fingerprint.isprintable()):  # fmt: skip
            raise ValueError("a fingerprint is printable ASCII text")
        if not 1 <= len(fingerprint) <= MAX_FINGERPRINT_LENGTH:
            raise ValueError(f"a fingerprint is 1 to {MAX_FINGERPRINT_LENGTH} characters")
        if type(self.seconds) is not int or self.seconds < 1:
            raise ValueError("a key is kept for a positive whole number of seconds")


class _Rows:
    """The statements of one of the two tables: the key, its ``columns``, its expiry."""

    def __init__(self, table: str, columns: tuple[str, ...]) -> None:
        names = ("sender_id", "idem_key", *columns, "expires_at")
        self.insert = (
            f"INSERT INTO {{db}}.{table} ({', '.join(names)})"
            f" VALUES ({', '.join(['%s'] * len(names))})"
        )
        where = " WHERE sender_id = %s AND idem_key = %s"
        self.select = f"SELECT {', '.join(columns)}, expires_at FROM {{db}}.{table}" + where
        sets = ", ".join(f"{column} = %s" for column in (*columns, "expires_at"))
        self.take_over = f"UPDATE {{db}}.{table} SET {sets}" + where
        self.expire = f"DELETE FROM {{db}}.{table} WHERE expires_at <= %s"


_CLAIMS = _Rows(TABLES[0], ("fingerprint",))
_KEYS = _Rows(TABLES[1], ("fingerprint", "object_id"))


def _put(session: Session, rows: _Rows, key: IdempotencyKey, values: tuple[Any, ...]) -> Any:
    """Insert the key's row in a write session; where the key is taken, the row there,
    locked (or None, once an expired row is taken over for this key)."""
    now = int(time.time())
    expires = now + key.seconds
    try:
        session.execute(rows.insert, (key.sender_id, key.key, *values, expires))
        return None
    except UniqueViolation:
        pass
    # A locking read: the newest committed row, whatever this transaction saw before.
    found = session.query(rows.select + session.dialect.for_update, (key.sender_id, key.key))
    if found and int(found[0][-1]) > now:
        return found[0]
    try:
        if found:
            session.execute(rows.take_over, (*values, expires, key.sender_id, key.key))
        else:  # expired and deleted meanwhile
            session.execute(rows.insert, (key.sender_id, key.key, *values, expires))
    except UniqueViolation:  # another attempt took it first: run again, to find it
        raise WriteConflict(f"idempotency key {key.key!r}: taken meanwhile") from None
    return None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _reused(key: IdempotencyKey) -> KeyReused:
    return KeyReused(f"idempotency key {key.key!r} was first sent with another request")


def record(session: Session, key: IdempotencyKey, object_id: int) -> None:
    """In the object's write transaction, on its shard: the key names ``object_id``.

    ``AlreadyCreated`` if the key names an object already (the transaction must then be
    rolled back), ``KeyReused`` if it was sent with another request."""
    found = _put(session, _KEYS, key, (key.fingerprint, object_id))
    if found is None:
        return
    if _text(found[0]) != key.fingerprint:
        raise _reused(key)
    raise AlreadyCreated(int(found[1]))


class IdempotencyKeys:
    """The keys of a store's senders, read and written on the shards themselves."""

    def __init__(self, store: Shards) -> None:
        self._store = store

    def claim(self, key: IdempotencyKey) -> bool:
        """Claim ``key`` for its request, on its sender's shard, before the request's object
        is made. True if the key is new; False if it was claimed by this same request
        before (a retry: look for what it made with ``created``). ``KeyReused`` if it was
        sent with another request."""
        shard_id = shard_of(key.sender_id)
        expires = int(time.time()) + key.seconds
        try:  # the usual case, a new key: one round trip
            with self._store.session(shard_id) as session:
                session.execute(_CLAIMS.insert, (key.sender_id, key.key, key.fingerprint, expires))
            return True
        except UniqueViolation:
            pass

        def check(session: Session) -> bool:
            found = _put(session, _CLAIMS, key, (key.fingerprint,))
            if found is None:
                return True
            if _text(found[0]) != key.fingerprint:
                raise _reused(key)
            return False

        return self._store.transaction(shard_id, check)

    def created(self, shard_id: int, key: IdempotencyKey) -> int | None:
        """The ID of the object an earlier attempt with ``key`` made on ``shard_id``, if its
        transaction committed; None if none did (yet). ``KeyReused`` if the key there was
        sent with another request."""
        with self._store.session(shard_id) as session:
            rows = session.query(_KEYS.select, (key.sender_id, key.key))
        if not rows or int(rows[0][-1]) <= time.time():
            return None
        if _text(rows[0][0]) != key.fingerprint:
            raise _reused(key)
        return int(rows[0][1])

    def expire(self, shard_id: int, *, now: float | None = None) -> int:
        """Delete the shard's expired rows (as of ``now``); returns how many."""
        moment = int(time.time() if now is None else now)
        with self._store.session(shard_id) as session:
            return session.execute(_CLAIMS.expire, (moment,)) + session.execute(
                _KEYS.expire, (moment,)
            )
