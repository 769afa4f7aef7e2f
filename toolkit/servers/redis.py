"""Redis for the tests, the benchmarks and the local cluster: a private redis-server."""

from __future__ import annotations

from toolkit.servers.base import Availability, Server, exchange, find_program


class RedisServer(Server):
    """A private redis-server with no persistence at all."""

    name = "Redis"
    signatures = ("redis-server",)

    @classmethod
    def available(cls) -> Availability:
        if find_program("redis-server") is None:
            return Availability(
                False, "redis-server is not installed (Debian package: redis-server)"
            )
        return Availability(True)

    @property
    def url(self) -> str:
        """A ``redis://`` URL for database 0, for redis-py and Celery."""
        return f"redis://{self.host}:{self.port}/0"

    def _command(self) -> list[str]:
        redis_server = find_program("redis-server")
        assert redis_server is not None and self.tmpdir is not None
        return [
            redis_server,
            "--port", str(self.port),
            "--bind", self.host,
            "--save", "",
            "--appendonly", "no",
            "--dir", str(self.tmpdir),
            *self.extra_args,
        ]  # fmt: skip

    def _is_ready(self) -> bool:
        return exchange(self.host, self.port, b"PING\r\n").startswith(b"+PONG")
