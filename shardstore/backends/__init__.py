"""Storage backends, chosen by the scheme of a host's address."""

from __future__ import annotations

from typing import Any

from .base import Backend, Session
from .sql import Dialect, TableSet, UniqueViolation, batched

__all__ = [
    "Backend",
    "Dialect",
    "Session",
    "TableSet",
    "UniqueViolation",
    "batched",
    "open_backend",
]


def open_backend(host: str, address: str, **options: Any) -> Backend:
    """The backend for a host's address: ``mysql://...`` or ``sqlite:///dir``.

    ``mysql_login`` (``"user:password"``) is the MySQL login of hosts whose address names
    none, so that a shard map kept in ZooKeeper need hold no password.
    """
    scheme = address.split("://", 1)[0]
    mysql_login = options.pop("mysql_login", None)
    if scheme == "sqlite":
        from .sqlite import SQLiteBackend

        return SQLiteBackend(host, address, **options)
    if scheme == "mysql":
        from .mysql import MySQLBackend

        return MySQLBackend(host, address, login=mysql_login, **options)
    raise ValueError(f"host {host}: unknown backend scheme {scheme!r}")
