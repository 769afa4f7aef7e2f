"""``python -m toolkit.nemesis.link NETNS --inside PORTS --outside PORTS``: the cable between
the cluster's loopback and one of the nemesis's network namespaces.

A process moved into a namespace keeps using the cluster's addresses (``127.0.0.1:PORT``):

* for each port of ``--inside`` (a server that stays on the cluster's loopback), the link
  listens on ``127.0.0.1:PORT`` inside the namespace and forwards every connection to the
  same port on the cluster's loopback;
* for each port of ``--outside`` (a server moved into the namespace), it listens on the
  cluster's loopback and forwards into the namespace.

A socket belongs to the namespace its thread was in when it was made, so one process, in
the cluster's namespace, makes each listening or connecting socket in the right one
(``setns`` around ``socket()``) and then serves them all. The link itself never cuts
anything: partitions are nftables rules inside the namespace (network.py), which see
every packet between the namespace's processes and the link's sockets there.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import os
import socket
import sys
from collections.abc import Iterator

HOST = "127.0.0.1"
CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def _enter(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"setns: {os.strerror(errno)}")


class Sides:
    """The cluster's network namespace (this process's) and the nemesis's ``netns``."""

    def __init__(self, netns: str) -> None:
        self.cluster = os.open("/proc/self/ns/net", os.O_RDONLY)
        self.netns = os.open(f"/run/netns/{netns}", os.O_RDONLY)

    @contextlib.contextmanager
    def inside(self) -> Iterator[None]:
        _enter(self.netns)
        try:
            yield
        finally:
            _enter(self.cluster)

    def socket(self, inside: bool) -> socket.socket:
        if not inside:
            return socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with self.inside():
            return socket.socket(socket.AF_INET, socket.SOCK_STREAM)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(ConnectionError, OSError):
            writer.close()


async def _forward(
    sides: Sides,
    port: int,
    connect_inside: bool,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> None:
    sock = sides.socket(connect_inside)
    sock.setblocking(False)
    try:
        await asyncio.get_running_loop().sock_connect(sock, (HOST, port))
    except OSError:
        sock.close()
        writer.close()  # the far side is down: so is this connection
        return
    far_reader, far_writer = await asyncio.open_connection(sock=sock)
    await asyncio.gather(_pump(reader, far_writer), _pump(far_reader, writer))


async def _serve(sides: Sides, inside: list[int], outside: list[int]) -> None:
    servers = []
    for port, listen_inside in [(p, True) for p in inside] + [(p, False) for p in outside]:
        sock = sides.socket(listen_inside)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(128)
        sock.setblocking(False)

        async def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter, port: int = port, to_inside: bool = not listen_inside) -> None:  # fmt: skip
            await _forward(sides, port, to_inside, r, w)

        servers.append(await asyncio.start_server(handle, sock=sock))
    print("linked", flush=True)  # the nemesis waits for this line
    await asyncio.gather(*(server.serve_forever() for server in servers))


def _ports(text: str) -> list[int]:
    return [int(p) for p in text.split(",") if p]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.nemesis.link")
    parser.add_argument("netns")
    parser.add_argument("--inside", type=_ports, default=[], help="ports served on loopback")
    parser.add_argument("--outside", type=_ports, default=[], help="ports served in NETNS")
    args = parser.parse_args(argv)
    asyncio.run(_serve(Sides(args.netns), args.inside, args.outside))
    return 0


if __name__ == "__main__":
    sys.exit(main())
