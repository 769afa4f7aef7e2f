"""The site's API over HTTP, as the load and the drills call it: one keep-alive connection
per thread, every answer a ``Reply`` (status 0 when none came)."""

from __future__ import annotations

import http.client
import json
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

API = "/api/v1"
#: How long one HTTP request may take before it counts as a connection error.
REQUEST_TIMEOUT = 10.0
#: The longest a writer sleeps on a ``Retry-After`` (the load must notice its own end).


@dataclass(frozen=True)
class Reply:
    status: int  # 0: no answer (connection refused, reset, timed out)
    body: bytes = b""
    retry_after: float | None = None

    def json(self) -> Any:
        return json.loads(self.body)


class Site:
    """The site's API at ``url`` (``http://127.0.0.1:PORT``), one keep-alive connection
    per thread."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname is None:
            raise ValueError(f"expected http://host:port, not {url!r}")
        self.url = url.rstrip("/")
        self.host, self.port = parts.hostname, parts.port or 80
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=REQUEST_TIMEOUT)
            self._local.connection = connection
        return connection

    def close(self) -> None:
        """Close this thread's connection."""
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        raw: bytes | None = None,
        content_type: str = "application/json",
    ) -> Reply:
        """``METHOD /api/v1{path}``; ``body`` goes as JSON, ``raw`` as it is."""
        headers = {"Accept": "application/json", "X-Forwarded-Proto": "https"}
        if token is not None:
            headers["Authorization"] = f"Token {token}"
        payload = raw if raw is not None else None if body is None else json.dumps(body).encode()
        if payload is not None:
            headers["Content-Type"] = content_type
        # A kept-alive connection the server has closed meanwhile (gunicorn closes idle ones
        # after 2 s) fails before the request is read: then once more on a fresh one.
        for attempt in range(2):
            reused = getattr(self._local, "connection", None) is not None
            connection = self._connection()
            try:
                connection.request(method, API + path, body=payload, headers=headers)
                response = connection.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if reused and attempt == 0:
                    continue
                return Reply(0)
            except (OSError, http.client.HTTPException):
                self.close()
                return Reply(0)
            if response.getheader("Connection", "").lower() == "close":
                self.close()
            retry = response.getheader("Retry-After")
            return Reply(response.status, data, float(retry) if retry and retry.isdigit() else None)
        return Reply(0)  # (not reached: the second attempt returns)
