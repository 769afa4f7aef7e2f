"""One request at a time: latency on a keep-alive connection, and the SQL statements a request
makes as MariaDB counts them.

Statements are counted on the server (``Questions``, which counts every statement a client
sends, not pings), around one request on an otherwise idle server, so both builds are
counted the same way, whatever their driver or their own instrumentation.
"""

from __future__ import annotations

import http.client
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

BEHIND_TLS = {"X-Forwarded-Proto": "https"}  # what the load balancer adds


class Client:
    """GETs on one keep-alive connection to 127.0.0.1:``port``."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def get(self, line: str) -> tuple[int, bytes, float]:
        """(status, body, milliseconds) for a path-file line ("path" or "path<TAB>token")."""
        path, _, token = line.partition("\t")
        headers = dict(BEHIND_TLS)
        if token:
            headers["Authorization"] = f"Token {token}"
        for attempt in range(2):
            try:
                start = time.perf_counter()
                self._conn.request("GET", path, headers=headers)
                response = self._conn.getresponse()
                body = response.read()
                return response.status, body, (time.perf_counter() - start) * 1000
            except (http.client.RemoteDisconnected, ConnectionError):
                if attempt:
                    raise
                self._conn.close()  # the server closed an idle keep-alive connection
                self._conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._conn.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def timed(client: Client, line: str) -> float:
    """Milliseconds of one GET, which must succeed."""
    status, _, ms = client.get(line)
    if status != 200:
        raise RuntimeError(f"GET {line.split(chr(9))[0]} on :{client.port}: {status}")
    return ms


def summary(times: list[float]) -> dict[str, float]:
    return {"p50": statistics.median(times), "p99": percentile(times, 0.99)}


def statements(mysql: Any, port: int, line: str, *, before: Callable[[], None] | None) -> int:
    """SQL statements MariaDB ran for one request (``before`` runs first, untimed)."""
    if before is not None:
        before()
    cursor = mysql.cursor()
    cursor.execute("SHOW GLOBAL STATUS LIKE 'Questions'")
    start = int(cursor.fetchone()[1])
    client = Client(port)
    try:
        status, _, _ = client.get(line)
    finally:
        client.close()
    cursor.execute("SHOW GLOBAL STATUS LIKE 'Questions'")
    # Less our own two SHOW statements (Questions counts the one that reads it).
    return int(cursor.fetchone()[1]) - start - 1 if status == 200 else -1
