"""memcached for the tests, the benchmarks and the local cluster: a private memcached."""

from __future__ import annotations

import os

from toolkit.servers.base import Availability, Server, exchange, find_program


class MemcachedServer(Server):
    """A private memcached with 64 MB of memory, TCP only."""

    name = "memcached"
    signatures = ("memcached",)

    @classmethod
    def available(cls) -> Availability:
        if find_program("memcached") is None:
            return Availability(False, "memcached is not installed (Debian package: memcached)")
        return Availability(True)

    def _command(self) -> list[str]:
        memcached = find_program("memcached")
        assert memcached is not None
        # memcached refuses to run as root unless told which user to be.
        as_root = ["-u", "root"] if os.geteuid() == 0 else []
        return [
            memcached,
            "-l", self.host,
            "-p", str(self.port),
            "-U", "0",
            "-m", "64",
            *as_root,
            *self.extra_args,
        ]  # fmt: skip

    def _is_ready(self) -> bool:
        return exchange(self.host, self.port, b"version\r\n").startswith(b"VERSION ")
