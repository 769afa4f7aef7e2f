"""Config documents and waiting, for the tests of the control plane and the live config."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def shard_map(hosts: int = 1, *, shards: int = 16) -> dict[str, Any]:
    """``hosts`` MySQL masters splitting ``shards`` shards evenly (version 0: to publish)."""
    per = shards // hosts
    return {
        "version": 0,
        "shard_count": shards,
        "hosts": {f"db{n}": f"mysql://10.0.0.{n}:3306" for n in range(1, hosts + 1)},
        "ranges": [
            {"range": [n * per, (n + 1) * per - 1], "master": f"db{n + 1}"} for n in range(hosts)
        ],
        "open": [[0, shards - 1]],
        "lookup_shards": shards,
    }


def sqlite_shard_map(directory: Path, *, open_to: int = 15) -> dict[str, Any]:
    """16 SQLite shards in ``directory``, open to new users up to shard ``open_to``."""
    return {
        "version": 0,
        "shard_count": 16,
        "hosts": {"db1": f"sqlite://{directory}"},
        "ranges": [{"range": [0, 15], "master": "db1"}],
        "open": [[0, open_to]],
        "lookup_shards": 16,
    }


def eventually(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Whether ``condition`` holds within ``timeout`` seconds (polled every 20 ms)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()
