"""The embedded default's index: SQLite FTS5 in one file (``var/search.sqlite3``).

One FTS5 table per kind; a document's rowid is its object's ID (IDs of pins, boards
and pinners never collide: the type is in the ID), and the columns search filters on
but never matches are UNINDEXED. Relevance is BM25 with the primary field weighted
``NAME_WEIGHT`` times the secondary one; an index of 3-character prefixes makes the
shortest prefixes quick. The file is in WAL mode, so readers never wait
on the writer; connections are pooled, as the shards' are.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from shardstore.backends.pool import ConnectionPool, discard

from .index import NAME_WEIGHT, STATE_TABLE, TABLES, IndexUnavailable, Row, SearchIndex
from .words import Query

# OperationalError messages that mean the file cannot be used now (others are bugs).
_UNAVAILABLE = ("locked", "unable to open", "disk I/O", "readonly", "malformed", "no such table")
#: Idle connections kept for reuse (request threads come and go).
MAX_IDLE = 8
KEY = "index"


def match_expression(query: Query) -> str:
    """FTS5's spelling of the query: each word a quoted phrase (a word is letters and digits,
    never a quote), all of them required; the last one, with a prefix, as the whole word
    or its prefix (a whole word matches both, and so ranks first)."""
    terms = [f'"{term}"' for term in query.terms]
    if query.prefix:
        terms[-1] = f"({terms[-1]} OR {terms[-1]}*)"
    return " AND ".join(terms)


class SQLiteIndex(SearchIndex):
    id_column = "rowid"

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = Path(path)
        self._pool = ConnectionPool(self._connect, max_idle=MAX_IDLE)

    def _connect(self, key: object) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(
                self.path, isolation_level=None, timeout=10.0, check_same_thread=False
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
        except (OSError, sqlite3.Error) as exc:
            raise IndexUnavailable(f"search index {self.path}: {exc}") from exc
        return connection

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """A pooled connection, given back after use (thrown away after an error)."""
        connection, _ = self._pool.acquire(KEY)
        try:
            yield connection
        except BaseException:
            discard(connection)
            raise
        self._pool.release(KEY, connection)

    def _translate(self, exc: sqlite3.Error) -> Exception:
        if isinstance(exc, sqlite3.OperationalError) and any(s in str(exc) for s in _UNAVAILABLE):
            return IndexUnavailable(f"search index {self.path}: {exc}")
        return exc

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        try:
            with self._connection() as connection:
                return connection.execute(sql.replace("%s", "?"), params).fetchall()
        except sqlite3.Error as exc:
            raise self._translate(exc) from exc

    def _execute_many(self, statements: Sequence[tuple[str, Sequence[Sequence[Any]]]]) -> None:
        try:
            with self._connection() as connection:
                connection.execute("BEGIN IMMEDIATE")
                for sql, rows in statements:
                    connection.executemany(sql.replace("%s", "?"), rows)
                connection.execute("COMMIT")  # (a connection that failed is closed: rolled back)
        except sqlite3.Error as exc:
            raise self._translate(exc) from exc

    def _create_tables(self) -> None:
        for table in TABLES.values():
            self._execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5("
                " name, body, owner_id UNINDEXED, board_id UNINDEXED, secret UNINDEXED,"
                " created UNINDEXED, tokenize = 'unicode61 remove_diacritics 0', prefix = '3')"
            )
        self._execute(
            f"CREATE TABLE IF NOT EXISTS {STATE_TABLE} (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
        )

    def _optimize(self, table: str) -> None:
        self._execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")

    def _search_sql(self, table: str, query: Query) -> tuple[str, str, list[Any]]:
        # bm25() is lower for a better match: its negation orders best first.
        score = f"-bm25({table}, {NAME_WEIGHT}, 1.0)"
        return score, f"{table} MATCH %s", [match_expression(query)]

    def close(self) -> None:
        self._pool.close()
