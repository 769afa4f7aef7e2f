"""An S3 API server for the tests: moto's server mode (``moto[server]``, requirements-dev.txt)
in a process of its own, on a free loopback port, speaking S3 and IAM over HTTP.

It starts with every request let through, so that a test can make its bucket and its IAM
users; ``enforce(True)`` then has it check each request's signature and the policies of the
user who signed it, as AWS would (``/moto-api/reset-auth``). Its log has a line for each
request answered, with the status (``answers``).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import urllib.request
from dataclasses import dataclass
from urllib.error import URLError

from toolkit.servers.base import Availability, Server

_REQUEST = re.compile(r'"(GET|HEAD|PUT|POST|DELETE) (\S+) HTTP/[\d.]+" (\d{3}) ')
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Answer:
    """One request the server answered, as its log tells it."""

    method: str
    path: str
    status: int


class AwsServer(Server):
    """moto's server: S3, IAM and the rest of the AWS API on one port."""

    name = "moto"
    signatures = ("moto.server",)

    @classmethod
    def available(cls) -> Availability:
        if importlib.util.find_spec("moto") is None or importlib.util.find_spec("flask") is None:
            return Availability(False, "moto[server] is not installed (requirements-dev.txt)")
        return Availability(True)

    def _command(self) -> list[str]:
        return [sys.executable, "-m", "moto.server", "-H", self.host, "-p", str(self.port)]

    def _is_ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/moto-api/", timeout=1) as answer:
                return bool(answer.status == 200)
        except (URLError, OSError):
            return False

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    def enforce(self, on: bool) -> None:
        """Check every request's signature and its signer's IAM policies from now on
        (``on``), or let every request through."""
        count = b"0" if on else b"inf"
        request = urllib.request.Request(
            f"{self.url}/moto-api/reset-auth", data=count, headers={"Content-Type": "text/plain"}
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            answer.read()

    def answers(self) -> list[Answer]:
        """Every request answered so far, oldest first."""
        text = _COLOUR.sub("", self.log_path.read_text(errors="replace"))
        return [
            Answer(method, path, int(status)) for method, path, status in _REQUEST.findall(text)
        ]
