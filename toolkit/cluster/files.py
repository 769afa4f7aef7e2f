"""The files of a cluster's directory: JSON and env files written whole, and the lock that
lets one ``up`` or ``down`` at a time work on it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def read_env(path: Path) -> dict[str, str]:
    """The ``export NAME=value`` lines of an env file, as a dict."""
    env = {}
    for line in path.read_text().splitlines():
        if line.startswith("export "):
            name, _, value = shlex.split(line[len("export ") :])[0].partition("=")
            env[name] = value
    return env


def read_json(path: Path) -> Any:
    return json.loads(path.read_text()) if path.exists() else None


def write_json(path: Path, data: Any, *, private: bool = False) -> None:
    write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n", private=private)


def write_text(path: Path, text: str, *, private: bool = False) -> None:
    """Write whole or not at all (a temporary file renamed over), mode 0600 if ``private``."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "w") as file:
        file.write(text)
    os.replace(temporary, path)


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """One ``up`` or ``down`` at a time per cluster."""
    with open(directory / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
