"""Operation terms: a fencing token on every MySQL server an operation touches, so that a run
whose locks are gone (its process paused past its ZooKeeper session, then resumed) never
changes a server that a newer operation has taken over (Vitess's primary terms do this for
its reparents).

Each run, once it holds its locks, draws a term from the lock service (``Locks.next_term``:
every term is greater than every one drawn before). While it runs, and while it undoes,
every operator's connection it opens (``MySQLHost``) first claims its server:

- the server's term (a row written with ``sql_log_bin=0``, so a replica keeps its own) is
  newer than the run's: refused, ``Superseded``, before any statement;
- it is the run's own: the run claimed the server before, and no newer run has since (so
  an operator cut off from ZooKeeper still undoes what it did there);
- it is older: the run's locks are checked (``LockLost`` if gone), its term is written,
  and every other session of the operators' account is ended (an older run's, which may
  be about to act), waiting until each has gone.

So once a newer run has claimed a server, no statement of an older run lands there: its
sessions were ended, and a new one is refused. A run claims a server at its first
connection to it; an operation that acts on one server before connecting to another
relies on the locks for the second, as before.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from ..exceptions import ShardStoreError

#: Where a server keeps the term of the run that claimed it last.
TABLE = "shardstore_fence.term"
#: How long a claim waits for the sessions it ended to go.
GONE_SECONDS = 5.0


class Server(Protocol):
    """An operator's connection to a MySQL server (``mysql_hosts.MySQLHost``)."""

    host: str
    port: int
    user: str

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]: ...

    def value(self, sql: str, params: tuple[Any, ...] = ()) -> Any: ...

    def end_session(self, session: int) -> bool: ...


class Superseded(ShardStoreError):
    """A newer operation has claimed this server: this run may not change it."""


@dataclass(frozen=True)
class Term:
    number: int
    owner: str  # who runs it: "ada: failover"
    still_held: Callable[[], None]  # raises LockLost once the run's locks are gone


_current: contextvars.ContextVar[Term | None] = contextvars.ContextVar("term", default=None)


@contextlib.contextmanager
def running(term: Term) -> Iterator[None]:
    """The block runs (or undoes) a plan under ``term``: its connections claim their servers."""
    token = _current.set(term)
    try:
        yield
    finally:
        _current.reset(token)


def claim(server: Server) -> None:
    """Claim ``server`` for the run in progress, if any (``MySQLHost`` calls it on connect)."""
    term = _current.get()
    if term is None:
        return
    stored = _stored(server)
    if stored > term.number:
        raise Superseded(
            f"{server.host}:{server.port} was taken over by a newer operation (term {stored},"
            f" this run's {term.number}): this run changes nothing there"
        )
    if stored == term.number:  # claimed by this run already, and by no newer one since
        return
    term.still_held()
    _write(server, term)
    ended = [s for s in _operator_sessions(server) if server.end_session(s)]
    deadline = time.monotonic() + GONE_SECONDS
    while set(ended) & set(_operator_sessions(server)):
        if time.monotonic() > deadline:
            raise Superseded(f"{server.host}:{server.port}: an older run's session did not end")
        time.sleep(0.05)


def _stored(server: Server) -> int:
    try:
        return int(server.value(f"SELECT number FROM {TABLE} WHERE id = 1") or 0)
    except ShardStoreError as exc:  # a HostError, with MySQL's errno
        if getattr(exc, "errno", 0) in (1049, 1146):  # no database, no table: never claimed
            return 0
        raise


def _write(server: Server, term: Term) -> None:
    """Written, never logged: a replica keeps its own term, and no GTID of its own."""
    server.query("SET SESSION sql_log_bin = 0")
    try:
        server.query(f"CREATE DATABASE IF NOT EXISTS {TABLE.split('.')[0]}")
        server.query(
            f"CREATE TABLE IF NOT EXISTS {TABLE} (id TINYINT PRIMARY KEY,"
            " number BIGINT NOT NULL, owner VARCHAR(255) NOT NULL) ENGINE=InnoDB"
        )
        server.query(
            f"INSERT INTO {TABLE} (id, number, owner) VALUES (1, %s, %s) ON DUPLICATE KEY"
            " UPDATE owner = IF(number < VALUES(number), VALUES(owner), owner),"
            " number = GREATEST(number, VALUES(number))",
            (term.number, term.owner[:255]),
        )
    finally:
        server.query("SET SESSION sql_log_bin = 1")
    if _stored(server) != term.number:  # a newer run's claim came between
        raise Superseded(f"{server.host}:{server.port} was taken over by a newer operation")


def _operator_sessions(server: Server) -> list[int]:
    """The other sessions of the operators' account on ``server``."""
    rows = server.query(
        "SELECT id FROM information_schema.processlist WHERE user = %s AND id <> CONNECTION_ID()",
        (server.user,),
    )
    return [int(row["id"]) for row in rows]
