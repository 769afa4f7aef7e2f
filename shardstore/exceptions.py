"""Every error shardstore raises, under one base class.

Each docstring says when the error is raised and what usually causes it, so an
operator reading a traceback knows where to look.
"""

from __future__ import annotations


class ShardStoreError(Exception):
    """Base class of every shardstore error."""


class InvalidId(ShardStoreError, ValueError):
    """An object ID (or one of its fields) is malformed or out of range.

    Raised by ``compose``/``decompose`` and by anything that parses an ID a
    client sent. The message names the offending field (shard_id, type_id,
    local_id, reserved bits). Usually a typo'd or truncated ID in a URL.
    """


class WrongType(InvalidId):
    """A well-formed ID of one object type was given where another was expected.

    Type checking is built into the ID: a board ID handed to the pin table is
    rejected here rather than read from the wrong table.
    """


class UnknownType(ShardStoreError, LookupError):
    """A type name or number that is not in the type registry."""


class InvalidTopology(ShardStoreError, ValueError):
    """A topology document failed validation; the message names the problem.

    Overlapping or missing ranges, unknown hosts, a master that is its own
    replica. Nothing is swapped in: the previous topology stays in force.
    """


class UnknownShard(ShardStoreError, LookupError):
    """A shard ID that no range of the topology covers.

    Usually an ID minted under a larger topology than this process has loaded,
    or a forged ID.
    """


class ShardUnavailable(ShardStoreError):
    """The host serving a shard could not be reached or failed mid-query.

    The message names the shard and the host. Nothing is written anywhere else
    instead: the caller sees the failure. Check the host, then the topology
    (has a failover happened that this process has not seen?).
    """

    def __init__(self, shard_id: int, host: str, reason: str) -> None:
        super().__init__(f"shard {shard_id} on host {host} is unavailable: {reason}")
        self.shard_id = shard_id
        self.host = host
        self.reason = reason


class ShardReadOnly(ShardUnavailable):
    """A write was refused, and nothing was written: the shard is changing hands.

    Either the shard map in force names another master for the shard than the
    one this request started on (a failover or split was published meanwhile),
    the shard is in a split's read-only window, or the host itself refused the
    write (MySQL ``read_only``: a demoted or fenced master). Retry after
    ``retry_after`` seconds: the new map will route it to the shard's master.

    Also raised for a read the host refused: a copy of the shard that a move left behind,
    fed by nothing (a reverted split's new master), reached by a process on a stale map.
    """

    retry_after = 1


class ShardMoving(ShardReadOnly):
    """A write met a split's read-only window: the shard is moving to another host.

    The store holds such a write until the window ends (``fence.HOLD_SECONDS``) and
    then sends it to the shard's new master; this is raised only when it could not.
    """


class WritesInFlight(ShardStoreError):
    """A new shard map is in force, but writes admitted under the old one were still in
    flight when the swap gave up waiting for them (``fence.DRAIN_SECONDS``): the process
    must not report the new map as followed, so an operation waiting on it stops."""


class WriteConflict(ShardStoreError):
    """A write transaction kept losing lock conflicts (deadlock, lock wait timeout).

    Each attempt was rolled back; ``Store.transaction`` retries a few times with
    backoff before raising this. Persistent conflicts mean a hot row: look at
    what writes the same mapping-count or object row so often.
    """


class DuplicateKey(ShardStoreError):
    """A mod-shard lookup key (a login, an email address, ...) is already taken.

    Nothing was written. Two concurrent inserts of one key leave exactly one
    winner; the other gets this error.
    """

    def __init__(self, lookup: str, key: str) -> None:
        super().__init__(f"{lookup} {key!r} is already taken")
        self.lookup = lookup
        self.key = key


class InvalidCursor(ShardStoreError, ValueError):
    """A paging cursor that this library did not produce (or was tampered with)."""


class NotFound(ShardStoreError, LookupError):
    """An object that does not exist (or is soft-deleted) was asked for by ID."""


class UnknownRelation(ShardStoreError, LookupError):
    """A mapping or lookup name that is not declared in the catalog."""


class InvalidKey(ShardStoreError, ValueError):
    """A lookup key that is empty or longer than production's column allows."""


class ObjectTooLarge(ShardStoreError, ValueError):
    """An object's JSON is larger than the store accepts (the same limit on every backend)."""


class KeyReused(ShardStoreError, ValueError):
    """An idempotency key was sent again with another request than the one it was first
    used for (another fingerprint, ``idempotency.py``). Nothing was written: a client
    sends a new key for each new request."""


class AlreadyCreated(ShardStoreError):
    """A create with an idempotency key found that the key already names an object: an
    earlier attempt's, committed (perhaps after its caller had given up on it, or while
    this one waited for its lock). Nothing was written; ``object_id`` is that object."""

    def __init__(self, object_id: int) -> None:
        super().__init__(f"an earlier attempt with this idempotency key made {object_id}")
        self.object_id = object_id
