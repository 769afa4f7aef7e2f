"""Cache pools: one per kind of data (as a catalog names them, and lists), each watched alone.

A pool is a small memcached-shaped interface over bytes. ``MemcachePool``
speaks to memcached servers through pymemcache (keys spread over the servers
by rendezvous hashing; a server that is down is a miss, and the invalidations
it missed are replayed before it serves again: see health.py); ``LocalPool``
(local_pool.py) keeps the same semantics in process memory for the embedded default
and for scripts. Each pool counts its hits and misses, so operators see which kind of
data misses.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from operator import methodcaller
from typing import Any, Protocol

from .. import metrics
from .health import health_of


@dataclass
class PoolStats:
    """A pool's counts in this process (tests and the console read them), each also
    counted for Prometheus (``shardstore.metrics``) under the pool's name."""

    pool: str
    hits: int = 0
    misses: int = 0
    calls: int = 0  # round trips (or, in process, operations) made

    def __post_init__(self) -> None:
        self._counted = (
            metrics.CACHE_CALLS.labels(self.pool),
            metrics.CACHE_LOOKUPS.labels(self.pool, "hit"),
            metrics.CACHE_LOOKUPS.labels(self.pool, "miss"),
        )

    def call(self, n: int = 1) -> None:
        self.calls += n
        self._counted[0].inc(n)

    def looked_up(self, hits: int, misses: int) -> None:
        self.hits += hits
        self.misses += misses
        self._counted[1].inc(hits)
        self._counted[2].inc(misses)

    def as_dict(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "calls": self.calls}


class CachePool(Protocol):
    """What the read-through layer needs from a pool (memcached's commands)."""

    name: str
    stats: PoolStats

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]: ...
    def homes(self, keys: Sequence[str]) -> dict[Any, list[str]]:
        """The keys by where they live (a memcached server): pools that share a home are
        read together by ``get_across``."""

    def fetch(self, home: Hashable, keys: Sequence[str]) -> dict[str, bytes]:
        """What ``home`` holds of ``keys`` (any pool's keys that live there), uncounted."""

    def fetch_tokens(self, home: Hashable, keys: Sequence[str]) -> dict[str, tuple[bytes, Any]]:
        """``fetch`` with each value's cas token (memcached's ``gets``), uncounted."""

    def claim(
        self, home: Hashable, items: Mapping[str, bytes], expire: int
    ) -> dict[str, tuple[bytes, Any]]:
        """``add`` each item at ``home``, then ``gets`` the keys (one round trip, uncounted):
        what each key holds once the adds are applied, with its token. A fill's claim must
        be in place before it reads the database; the token lets it fill only if nothing
        touched the key since."""

    def fill(self, home: Hashable, items: Sequence[tuple[str, bytes, Any, int]]) -> None:
        """``cas`` each (key, value, token, expiry in seconds) at ``home``, in one write,
        replies not awaited (uncounted)."""

    def gets_many(self, keys: Sequence[str]) -> dict[str, tuple[bytes, Any]]: ...
    def add(self, key: str, value: bytes, expire: int) -> bool: ...
    def cas(self, key: str, value: bytes, token: Any, expire: int) -> bool: ...
    def append(self, key: str, value: bytes) -> bool: ...
    def delete_many(self, keys: Iterable[str]) -> None: ...
    def clear(self) -> None: ...


class MemcachePool:
    """A pool of memcached servers (``["10.0.0.1:11211", ...]``).

    Each key has one home server (rendezvous hashing over the pool's servers, as
    pymemcache's HashClient spreads them). A server that fails is down for this
    process (``health.py``): its keys are misses and no error reaches the caller;
    they are never rerouted to another server, and before it serves again the
    deletes and appends it missed are replayed there, so nothing stale is served.
    """

    def __init__(
        self,
        name: str,
        servers: Sequence[str],
        *,
        timeout: float = 0.5,
        retry_seconds: float | None = None,
    ) -> None:
        from pymemcache.client.rendezvous import RendezvousHash

        self.name = name
        self.stats = PoolStats(name)
        self.servers = list(dict.fromkeys(servers))
        self.health = {address: health_of(address) for address in self.servers}
        if retry_seconds is not None:
            for health in self.health.values():
                health.retry_seconds = retry_seconds
        self._timeout = timeout
        # One server needs no key hashing (pymemcache's murmur3 is pure Python).
        self._hasher = RendezvousHash(nodes=list(self.servers)) if len(self.servers) > 1 else None
        self._clients: list[Any] = []
        self._clients_lock = threading.Lock()

    def _client(self, address: str) -> Any:
        """This thread's connection to ``address``, shared by every pool on that server:
        commands a thread sends without waiting for replies are then executed before its
        next read, whichever pool reads, and pools on one server are read together."""
        clients: dict[tuple[str, float], Any] | None = getattr(_connections, "clients", None)
        if clients is None:
            clients = _connections.clients = {}
        client = clients.get((address, self._timeout))
        if client is None or client.retired:
            from pymemcache.client.base import Client

            host, port = address.rsplit(":", 1)
            # no_delay: a read right after unanswered writes must not wait for a delayed
            # ACK. Errors are raised to this pool, which turns them into misses.
            client = clients[address, self._timeout] = Client(
                (host, int(port)), connect_timeout=self._timeout, timeout=self._timeout,
                no_delay=True, ignore_exc=False,
            )  # fmt: skip
            client.retired = False  # its pool closed (the next pool to use it makes another)
            with self._clients_lock:
                self._clients.append(client)
        return client

    def server_of(self, key: str) -> str:
        """The home server of ``key``."""
        if self._hasher is None:
            return self.servers[0]
        return str(self._hasher.get_node(key))

    def _by_server(self, keys: Iterable[str]) -> dict[str, list[str]]:
        grouped: dict[str, list[str]] = {}
        for key in keys:
            grouped.setdefault(self.server_of(key), []).append(key)
        return grouped

    def _run(
        self,
        address: str,
        command: Callable[[Any], Any],
        default: Any,
        *,
        invalidates: Sequence[str] = (),
        fill: bool = False,
    ) -> Any:
        """``command(client)`` on a server that is up; ``default`` when it is down or fails
        (a failure marks it down). ``invalidates``: the keys a lost command leaves stale,
        recorded for the replay. A fill (add, cas) refused by the server is not an outage."""
        from pymemcache.exceptions import MemcacheClientError, MemcacheUnexpectedCloseError

        health = self.health[address]
        client = self._client(address)
        if not health.admit(client, invalidates):
            return default
        # A connection left idle across a restart or a network cut fails on first use, at
        # once (reset, or closed): that is the connection, not the server. Once more on a
        # fresh one before the server is called down (every command here may be repeated:
        # deletes and adds are idempotent, a cas's token is spent, a list drops a repeated
        # entry). A timeout is the server's: waiting twice would only double the wait.
        for fresh in (client.sock is None, True):
            try:
                return command(client)
            except MemcacheClientError:
                raise  # a malformed key or command: ours to fix, not an outage
            except Exception as error:  # noqa: BLE001 - an outage is a miss, never an error page
                if fill and not isinstance(error, OSError | MemcacheUnexpectedCloseError):
                    return default  # e.g. SERVER_ERROR object too large: not stored
                client.close()
                if fresh or isinstance(error, TimeoutError):
                    break
        health.failed(invalidates)
        return default

    def homes(self, keys: Sequence[str]) -> dict[Any, list[str]]:
        return self._by_server(keys)

    def fetch(self, home: Hashable, keys: Sequence[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = self._run(str(home), methodcaller("get_many", keys), {})
        return found

    def fetch_tokens(self, home: Hashable, keys: Sequence[str]) -> dict[str, tuple[bytes, Any]]:
        found: dict[str, tuple[bytes, Any]] = self._run(
            str(home), methodcaller("gets_many", keys), {}
        )
        return found

    # memcached has no multi-add or multi-cas: these go back to back on this thread's
    # connection to the server, in one write, without waiting for replies (noreply). The
    # claims are followed by a ``gets`` of their keys: a server runs a connection's commands
    # in order, so its answer comes once every add was applied (a claim must be in place
    # before the filler reads the database, or a writer's delete could land before it and
    # the filler store what it read before the write), and it carries the token the fill's
    # cas will need. Fills need no wait: a cas whose claim was deleted or changed fails.
    # One write, not one per key: a cold page of 50 objects claims and fills 50 keys.
    def claim(
        self, home: Hashable, items: Mapping[str, bytes], expire: int
    ) -> dict[str, tuple[bytes, Any]]:
        adds = [_command(b"add", key, value, expire) for key, value in items.items()]
        claim = partial(_claim, commands=adds, keys=list(items))
        found: dict[str, tuple[bytes, Any]] = self._run(str(home), claim, {}, fill=True)
        return found

    def fill(self, home: Hashable, items: Sequence[tuple[str, bytes, Any, int]]) -> None:
        commands = [
            _command(b"cas", key, value, expire, token=token) for key, value, token, expire in items
        ]
        self._run(str(home), partial(_send, commands=commands), None, fill=True)

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]:
        if not keys:
            return {}
        self.stats.call()
        found: dict[str, bytes] = {}
        for address, batch in self._by_server(keys).items():
            found.update(self.fetch(address, batch))
        self.stats.looked_up(len(found), len(keys) - len(found))
        return found

    def gets_many(self, keys: Sequence[str]) -> dict[str, tuple[bytes, Any]]:
        if not keys:
            return {}
        self.stats.call()
        found: dict[str, tuple[bytes, Any]] = {}
        for address, batch in self._by_server(keys).items():
            found.update(self.fetch_tokens(address, batch))
        return found

    def add(self, key: str, value: bytes, expire: int) -> bool:
        self.stats.call()
        return bool(
            self._run(
                self.server_of(key),
                methodcaller("add", key, value, expire=expire, noreply=False),
                False,
                fill=True,
            )
        )

    def cas(self, key: str, value: bytes, token: Any, expire: int) -> bool:
        self.stats.call()
        return bool(
            self._run(
                self.server_of(key),
                methodcaller("cas", key, value, token, expire=expire, noreply=False),
                False,
                fill=True,
            )
        )

    def append(self, key: str, value: bytes) -> bool:
        """Append to a cached list; a lost append is replayed as a delete of the list."""
        self.stats.call()
        return bool(
            self._run(
                self.server_of(key),
                methodcaller("append", key, value, noreply=False),
                False,
                invalidates=[key],
            )
        )

    def delete_many(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        if keys:
            self.stats.call(len(keys))  # memcached has no multi-delete: one each
            for address, batch in self._by_server(keys).items():
                self._run(
                    address,
                    methodcaller("delete_many", batch, noreply=False),
                    None,
                    invalidates=batch,
                )

    # -- what Django's cache API needs besides (pinboard/cache_backend.py) ----------------
    # A set, a delete or an incr that does not land is an invalidation lost: replayed
    # as a delete. A touch that does not land only leaves the old expiry.

    def set_many(self, items: Mapping[str, bytes], expire: int) -> None:
        if items:
            self.stats.call()
            for address, keys in self._by_server(items).items():
                self._run(
                    address,
                    methodcaller("set_many", {k: items[k] for k in keys}, expire, noreply=False),
                    None,
                    invalidates=keys,
                )

    def delete(self, key: str) -> bool:
        """Whether the key was there to delete (False too when its server is down)."""
        self.stats.call()
        command = methodcaller("delete", key, noreply=False)
        return bool(self._run(self.server_of(key), command, False, invalidates=[key]))

    def incr(self, key: str, delta: int) -> int | None:
        """memcached's incr (decr for a negative delta: it stops at 0); None if the key is
        absent or its server down."""
        self.stats.call()
        verb, by = ("incr", delta) if delta >= 0 else ("decr", -delta)
        command = methodcaller(verb, key, by, noreply=False)
        value = self._run(self.server_of(key), command, None, invalidates=[key])
        return None if value is None else int(value)

    def touch(self, key: str, expire: int) -> bool:
        self.stats.call()
        command = methodcaller("touch", key, expire, noreply=False)
        return bool(self._run(self.server_of(key), command, False, fill=True))

    def clear(self) -> None:
        """Empty every server of the pool (a server that is down is flushed when it returns)."""
        for address in self.servers:
            self._run(address, methodcaller("flush_all", noreply=False), None)
            health = self.health[address]
            if not health.up:
                health.flush_on_return()

    def close(self) -> None:
        with self._clients_lock:
            clients, self._clients = self._clients, []
        for client in clients:
            client.retired = True
            client.close()


#: Each thread's connections, by server address (and timeout), shared by the pools there.
_connections = threading.local()


def _command(verb: bytes, key: str, value: bytes, expire: int, *, token: Any = None) -> bytes:
    """A storage command in memcached's text protocol, as pymemcache writes one for bytes
    (flags 0), with ``noreply``."""
    if token is None:
        cas = b""
    else:  # pymemcache's gets returns the token as bytes
        cas = b" " + (token if isinstance(token, bytes) else str(token).encode())
    head = b"%s %s 0 %d %d%s noreply\r\n" % (verb, key.encode(), expire, len(value), cas)
    return head + value + b"\r\n"


def _send(client: Any, *, commands: list[bytes]) -> None:
    """``commands`` (noreply) in one write on pymemcache ``client``'s connection."""
    if client.sock is None:
        client._connect()
    client.sock.sendall(b"".join(commands))


def _claim(client: Any, *, commands: list[bytes], keys: list[str]) -> dict[str, tuple[bytes, Any]]:
    """The adds ``commands`` then a ``gets`` of ``keys``, whose reply comes once they are
    applied: one round trip."""
    _send(client, commands=commands)
    found: dict[str, tuple[bytes, Any]] = client.gets_many(keys)
    return found
