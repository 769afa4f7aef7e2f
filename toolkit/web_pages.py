"""A small web server on loopback that stands in for the web in the tests of pins from a URL:
it answers each path from a table of ``Route``s (a body, its type and status, more headers,
a delay, a trickle) and records the requests it got. It runs in a thread of the test's own
process (``http.server``), from ``with WebPages() as web:`` to the end of the block."""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self

from toolkit.processes import HOST


@dataclass(frozen=True)
class Route:
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    #: Seconds before the answer starts.
    delay: float = 0.0
    #: Seconds between the body's bytes, sent one at a time (0: all at once).
    trickle: float = 0.0
    #: Send a Content-Length (without one the body ends when the connection closes).
    declare_length: bool = True


@dataclass(frozen=True)
class Seen:
    path: str
    host: str  # the Host header


class WebPages:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.seen: list[Seen] = []
        self._server = ThreadingHTTPServer((HOST, 0), _handler(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str, host: str = HOST) -> str:
        return f"http://{host}:{self.port}{path}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def _handler(pages: WebPages) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            pages.seen.append(Seen(self.path, self.headers.get("Host", "")))
            route = pages.routes.get(self.path, Route(b"not here", "text/plain", status=404))
            time.sleep(route.delay)
            # The client may stop reading (too large, or too slow, for it).
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._answer(route)

        def _answer(self, route: Route) -> None:
            self.send_response(route.status)
            self.send_header("Content-Type", route.content_type)
            if route.declare_length:
                self.send_header("Content-Length", str(len(route.body)))
            for name, value in route.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if not route.trickle:
                self.wfile.write(route.body)
                return
            for byte in route.body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(route.trickle)

        def log_message(self, format: str, *args: object) -> None:
            pass  # the tests look at ``seen``

    return Handler
