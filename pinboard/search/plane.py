"""The process's search index, opened on first use from ``settings.SEARCH_URL``
(``PINBOARD_SEARCH_URL``; the embedded default is SQLite in ``var/search.sqlite3``)."""

from __future__ import annotations

from django.conf import settings

from ..process_wide import ProcessWide
from .index import SearchIndex
from .mysql_index import MySQLIndex
from .sqlite_index import SQLiteIndex


def open_index(url: str) -> SearchIndex:
    """The index a URL names: ``sqlite://PATH`` or ``mysql://user:password@host:port/name``."""
    if url.startswith("sqlite://"):
        return SQLiteIndex(url.removeprefix("sqlite://"))
    if url.startswith("mysql://"):
        return MySQLIndex(url)
    raise ValueError(f"a search index is sqlite://PATH or mysql://...; not {url[:40]!r}")


def _open_from_settings() -> SearchIndex:
    return open_index(settings.SEARCH_URL)


_indexes = ProcessWide(_open_from_settings)


def search_index() -> SearchIndex:
    """The process's index."""
    return _indexes.get()


def use(index: SearchIndex | None) -> SearchIndex | None:
    """Swap the process's index (tests); returns the previous one."""
    return _indexes.use(index)
