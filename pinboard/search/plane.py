"""The process's search index, opened on first use from ``settings.SEARCH_URL``
(``PINBOARD_SEARCH_URL``; the embedded default is SQLite in ``var/search.sqlite3``)."""

from __future__ import annotations

import threading

from django.conf import settings

from .index import SearchIndex
from .mysql_index import MySQLIndex
from .sqlite_index import SQLiteIndex

_index: SearchIndex | None = None
_lock = threading.Lock()


def open_index(url: str) -> SearchIndex:
    """The index a URL names: ``sqlite://PATH`` or ``mysql://user:password@host:port/name``."""
    if url.startswith("sqlite://"):
        return SQLiteIndex(url.removeprefix("sqlite://"))
    if url.startswith("mysql://"):
        return MySQLIndex(url)
    raise ValueError(f"a search index is sqlite://PATH or mysql://...; not {url[:40]!r}")


def search_index() -> SearchIndex:
    """The process's index."""
    global _index
    if _index is None:
        with _lock:
            if _index is None:
                _index = open_index(settings.SEARCH_URL)
    return _index


def use(index: SearchIndex | None) -> SearchIndex | None:
    """Swap the process's index (tests); returns the previous one."""
    global _index
    with _lock:
        previous, _index = _index, index
    return previous
