"""A loopback TCP proxy that can cut a server off and let it back, as a network partition would.

Stopping a server is not the same outage: a restarted memcached comes back empty,
while one that was only unreachable comes back with everything it held, including
values that writes made stale while their invalidations could not reach it. Put a
``CutOff`` in front of the server, point clients at ``proxy.address``, then
``cut()`` (every open connection is reset, new ones are reset as they arrive)
and ``heal()`` (connections pass again). The server itself never notices.
``delay`` holds what clients send for that long before it goes on: a slow path,
on which a command sent without waiting for its reply lands late.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from typing import Self

from toolkit.processes import HOST

_CHUNK = 65536


class _Link:
    """One client's connection through the proxy: its two sockets and the two pumps."""

    def __init__(self, client: socket.socket, server: socket.socket) -> None:
        self.sockets = (client, server)
        self._pumps = 2
        self._lock = threading.Lock()

    def stop(self) -> None:
        """Wake both pumps (a socket closed under a blocked ``recv`` would not, and its
        number could go to a new connection whose bytes the old pump would then take)."""
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def pump_done(self) -> bool:
        """A pump ended; the last one closes both sockets (a RST, with SO_LINGER 0)."""
        self.stop()
        with self._lock:
            self._pumps -= 1
            last = self._pumps == 0
        if last:
            for sock in self.sockets:
                with contextlib.suppress(OSError):
                    sock.close()
        return last


class CutOff:
    """A proxy on the loopback address (a free port) to ``host:port``; ``with CutOff(...)`` closes it."""

    def __init__(self, host: str, port: int, *, delay: float = 0.0) -> None:
        self.upstream = (host, port)
        self.delay = delay
        self._listener = socket.create_server((HOST, 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._links: set[_Link] = set()
        self._cut = False
        self._closed = False
        self._acceptor = threading.Thread(target=self._accept, name="cutoff-accept", daemon=True)
        self._acceptor.start()

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    def cut(self) -> None:
        """Reset every connection through the proxy, and every new one, until ``heal()``."""
        with self._lock:
            self._cut = True
            links = list(self._links)
        for link in links:
            link.stop()

    def heal(self) -> None:
        with self._lock:
            self._cut = False

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self.cut()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._listener.close()
        self._acceptor.join(timeout=5)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            with self._lock:
                refuse, closed = self._cut, self._closed
            if refuse or closed:
                _reset(client)
                if closed:
                    return
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                _reset(client)
                continue
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(None)
            link = _Link(client, server)
            with self._lock:
                if self._cut:  # cut while this one was being connected
                    _reset(client)
                    _reset(server)
                    continue
                self._links.add(link)
            for source, sink, delay in ((client, server, self.delay), (server, client, 0.0)):
                threading.Thread(
                    target=self._pump, args=(link, source, sink, delay), daemon=True
                ).start()

    def _pump(self, link: _Link, source: socket.socket, sink: socket.socket, delay: float) -> None:
        try:
            while data := source.recv(_CHUNK):
                if delay:
                    time.sleep(delay)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            if link.pump_done():
                with self._lock:
                    self._links.discard(link)


def _reset(sock: socket.socket) -> None:
    """Close with a RST (SO_LINGER 0), as a broken path looks to the peer."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()
