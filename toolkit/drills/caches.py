"""The memcached drill: one of the two cache servers fails under load, twice over.

1. **Killed and restarted** (``kill -9``, then the same port): it comes back empty.
2. **Frozen and thawed** (``SIGSTOP`` then ``SIGCONT`` to its PID, as a network partition
   or a stalled host would look): it comes back with everything it held, including
   values that writes made while it could not be reached have made stale.

Each time, while it is out, the drill edits the boards of the load's pinners (a new
description each) and reads them back; once it is back (and has had a second to be
tried again), it reads them all again, edits them again and reads once more. Every read
must show the last edit: the site's processes must not serve what the server missed
(shardstore/cache/health.py replays the invalidations it missed before it serves). The
load meanwhile must see no error at all: a cache server down is a miss, never a 503.
Some of the boards' keys live on the failed server (rendezvous hashing): the figures say
how many.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import time
from collections.abc import Callable

from toolkit.cluster.state import Cluster
from toolkit.load.api import Site
from toolkit.load.pinners import Pinner
from toolkit.processes import HOST

from .base import SETTLE, WARM_UP, DrillError, Drills, Result

#: How long the server stays out, and how long its return is given before reads count.
OUT_SECONDS = 2.0
BACK_SECONDS = 2.0
#: Reads of each board after its return (the site runs several processes: each must be fresh).
READS = 4
SERVER = "memcached1"


def memcached(d: Drills, result: Result) -> None:
    process = d.process(SERVER)
    address = f"127.0.0.1:{d.cluster.port(SERVER)}"
    result.title = f"{SERVER} ({address}) killed and restarted, then frozen and thawed, under load"
    topology = d.topology()
    load = d.load(topology)
    pinners = [p for group in load.pinners.values() for p in group]
    result.figure(f"boards edited while it is out: {len(pinners)}, {_homed(d, pinners, address)} of them cached on {SERVER}")  # fmt: skip
    load.wait(WARM_UP)
    probe = Probe(d.site, pinners)
    probe.read_all()  # cached now, on both servers

    def kill() -> Callable[[], None]:
        process.halt(kill=True)

        def restart() -> None:
            process.restart()

        return restart

    def freeze() -> Callable[[], None]:
        pid = process.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        return lambda: os.kill(pid, signal.SIGCONT)

    for name, fail in (("killed", kill), ("frozen", freeze)):
        items_before = _items(address)
        d.say(f"{SERVER} {name}")
        back = fail()
        try:
            load.wait(OUT_SECONDS / 2)
            probe.edit_all(f"{name} out")
            stale_out = probe.read_all()
            load.wait(OUT_SECONDS / 2)
        finally:
            back()
        d.say(f"{SERVER} back")
        load.wait(BACK_SECONDS)
        stale_back = sum(probe.read_all() for _ in range(READS))
        probe.edit_all(f"{name} back")
        stale_again = sum(probe.read_all() for _ in range(READS))
        items_after = _items(address)
        result.figure(
            f"{name}: items on {SERVER} {items_before} before, {items_after} after;"
            f" stale reads while out {stale_out}, once back {stale_back},"
            f" after editing again {stale_again}"
        )
        result.bound(
            f"{name}: stale values served",
            stale_out + stale_back + stale_again == 0,
            stale_out + stale_back + stale_again,
        )
        result.bound(f"{name}: {SERVER} serves again", items_after > 0, f"{items_after} items")
    load.wait(SETTLE)
    report = d.finish(result, load)
    errors = report.errors(*report.groups) + probe.errors
    result.bound("errors (load, edits and reads)", errors == 0, errors)
    if probe.statuses:
        result.figure(f"edits and reads that failed: {probe.statuses}")


class Probe:
    """Edits the pinners' boards and checks that reads show the last edit."""

    def __init__(self, site: Site, pinners: list[Pinner]) -> None:
        self.site = site
        self.pinners = pinners
        self.expected: dict[int, str | None] = {p.board_id: None for p in pinners}
        self.errors = 0
        self.statuses: dict[int, int] = {}

    def _failed(self, status: int) -> None:
        self.errors += 1
        self.statuses[status] = self.statuses.get(status, 0) + 1

    def edit_all(self, label: str) -> None:
        for p in self.pinners:
            text = f"{label} {secrets.token_hex(4)}"
            reply = self.site.call(
                "PATCH", f"/boards/{p.board_id}", {"description": text}, token=p.token
            )
            if reply.status == 200:
                self.expected[p.board_id] = text
            else:
                self._failed(reply.status)

    def read_all(self) -> int:
        """Read every board once; how many showed an older description than the last edit."""
        stale = 0
        for p in self.pinners:
            reply = self.site.call("GET", f"/boards/{p.board_id}")
            if reply.status != 200:
                self._failed(reply.status)
                continue
            want = self.expected[p.board_id]
            if want is not None and reply.json().get("description") != want:
                stale += 1
        return stale


def _homed(d: Drills, pinners: list[Pinner], address: str) -> str:
    """How many of the boards' cache keys live on ``address`` ("?" if the pool cannot say)."""
    from shardstore.cache import MemcachePool

    servers = d.document("caches")["pools"]["boards"]  # type: ignore[index]
    pool = MemcachePool("boards", servers)
    server_of = getattr(pool, "server_of", None)
    if server_of is None:
        return "?"
    return str(sum(1 for p in pinners if server_of(f"v1:board:{p.board_id}") == address))


def _items(address: str) -> int:
    """``curr_items`` of the memcached at ``address`` (-1 if it does not answer)."""
    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=2) as conn:
            conn.sendall(b"stats\r\n")
            data, deadline = b"", time.monotonic() + 2
            while not data.endswith(b"END\r\n") and time.monotonic() < deadline:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return -1
    for line in data.decode(errors="replace").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "curr_items":
            return int(parts[2])
    return -1


def flush_memcached(cluster: Cluster) -> None:
    """Every cache server of ``cluster`` emptied (``flush_all``), as evictions would."""
    for name, row in cluster.state["processes"].items():
        if name.startswith("memcached"):
            with socket.create_connection((HOST, row["port"]), timeout=5) as server:
                server.sendall(b"flush_all\r\n")
                if not server.recv(64).startswith(b"OK"):
                    raise DrillError(f"{name} did not flush")
