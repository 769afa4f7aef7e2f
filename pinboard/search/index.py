"""The search index: text to IDs, kept apart from the shards, on one of two backends.

The shards cannot answer "which pins say *garden*": an object lives on the shard of
its ID, and a word could be on any of 4096. So search has a store of its own, one
table per kind of document (pins, boards, pinners), holding for each object only what
search needs: its ID, its words (``words.search_text``; a primary field, such as a
pin's description, and a secondary one, such as its board's name), its owner, its
board (for a pin), whether it is secret (a secret board and its pins) and when it
was made. It answers with IDs, best first: relevance, then the newest. The pages and
the API read the objects themselves from the store, and check there who may see them
(``queries``): the index is a way in, never the truth.

* ``sqlite://PATH``: SQLite FTS5 in one file (the embedded default:
  ``var/search.sqlite3``); ``sqlite_index.py``.
* ``mysql://user:password@host:port/name``: InnoDB FULLTEXT in a database of its own,
  apart from the shard databases (``PINBOARD_SEARCH_URL``); ``mysql_index.py``.

``plane.search_index()`` is the process's index. Celery tasks keep it current
(``tasks``), and ``manage.py search rebuild`` makes it again from the shards
(``rebuild``).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from shardstore.interface import QueryCount

from .words import Query

#: The kinds of document, by the object type each is: its table in the index.
TABLES = {"pin": "search_pins", "board": "search_boards", "user": "search_users"}
#: Weight of a match in a document's primary field against its secondary one.
NAME_WEIGHT = 4.0
#: The rebuild's progress and the like, one text value per name.
STATE_TABLE = "search_state"
#: IDs per DELETE statement.
DELETE_BATCH = 500


@dataclass(frozen=True)
class Document:
    """What the index holds of one object; ``name`` and ``body`` are ``search_text``."""

    kind: str
    id: int
    name: str
    body: str
    owner_id: int
    board_id: int | None  # a pin's board; None for boards and pinners
    secret: bool
    created: int  # microseconds since the epoch: among equally relevant documents, newest first


class IndexUnavailable(Exception):
    """The index cannot be read or written now (its server is down, its file unreadable);
    a page says search is unavailable, a task tries again later."""


Row = tuple[Any, ...]


class SearchIndex(ABC):
    """Both backends: what differs is how each creates its tables, stores a document's
    words and spells a query; the rest is written once, with ``%s`` placeholders."""

    #: The column holding the object's ID.
    id_column = "id"

    def __init__(self) -> None:
        self._counts = threading.local()
        self._created = False
        self._create_lock = threading.Lock()

    # -- what each backend provides -------------------------------------------------

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run one statement; its rows (IndexUnavailable if the backend cannot)."""

    @abstractmethod
    def _execute_many(self, statements: Sequence[tuple[str, Sequence[Sequence[Any]]]]) -> None:
        """Run each statement over its rows of parameters, all in one transaction."""

    @abstractmethod
    def _create_tables(self) -> None:
        """Make the tables if they are not there."""

    @abstractmethod
    def _optimize(self, table: str) -> None:
        """Merge the table's index: what many writes left in pieces."""

    @abstractmethod
    def _search_sql(self, table: str, query: Query) -> tuple[str, str, list[Any]]:
        """The score to order by (best first), the match condition, and their parameters."""

    def _stored(self, text: str) -> str:
        """A document's words as the backend stores them."""
        return text

    def _read(self, stored: str) -> str:
        """Stored words back as ``search_text``."""
        return stored

    @abstractmethod
    def close(self) -> None: ...

    # -- the interface ------------------------------------------------------------------

    def create(self) -> None:
        """Make the index's tables (idempotent; done before the first use anyway)."""
        with self._create_lock:
            if not self._created:
                self._create_tables()
                self._created = True

    def upsert(self, documents: Sequence[Document]) -> None:
        """Store these documents as they are now, replacing what was there."""
        by_table: dict[str, list[list[Any]]] = {}
        for doc in documents:
            by_table.setdefault(TABLES[doc.kind], []).append(
                [doc.id, self._stored(doc.name), self._stored(doc.body), doc.owner_id,
                 doc.board_id, int(doc.secret), doc.created]
            )  # fmt: skip
        columns = f"{self.id_column}, name, body, owner_id, board_id, secret, created"
        statements = [
            (f"REPLACE INTO {table} ({columns}) VALUES (%s, %s, %s, %s, %s, %s, %s)", rows)
            for table, rows in by_table.items()
        ]
        if statements:
            self._run_many(statements)

    def delete(self, kind: str, ids: Sequence[int]) -> None:
        """Forget these objects (those the index does not hold are passed over)."""
        for start in range(0, len(ids), DELETE_BATCH):
            batch = ids[start : start + DELETE_BATCH]
            marks = ", ".join(["%s"] * len(batch))
            self._run(f"DELETE FROM {TABLES[kind]} WHERE {self.id_column} IN ({marks})", batch)

    def search(
        self,
        kind: str,
        query: Query,
        *,
        viewer_id: int | None,
        as_of: int,
        offset: int,
        limit: int,
    ) -> list[int]:
        """IDs of the documents that hold every word of ``query`` (the last as a prefix too),
        best first: relevance, then the newest, then the highest ID. Secret ones only if
        ``viewer_id`` owns them; none made after ``as_of`` (a cursor's time: documents
        made while a pinner scrolls do not push what they saw onto the next page)."""
        table = TABLES[kind]
        score, match, params = self._search_sql(table, query)
        sql = (
            f"SELECT {self.id_column}, {score} AS score FROM {table} WHERE {match}"
            " AND (secret = 0 OR owner_id = %s) AND created <= %s"
            f" ORDER BY score DESC, created DESC, {self.id_column} DESC LIMIT %s OFFSET %s"
        )
        rows = self._run(
            sql, [*params, -1 if viewer_id is None else viewer_id, as_of, limit, offset]
        )
        return [int(row[0]) for row in rows]

    def documents(self, kind: str, first_id: int, last_id: int) -> list[Document]:
        """The documents of IDs ``first_id`` to ``last_id``, in ID order (rebuilds compare)."""
        rows = self._run(
            f"SELECT {self.id_column}, name, body, owner_id, board_id, secret, created"
            f" FROM {TABLES[kind]} WHERE {self.id_column} BETWEEN %s AND %s"
            f" ORDER BY {self.id_column}",
            (first_id, last_id),
        )
        return [
            Document(kind, int(i), self._read(name), self._read(body), int(owner),
                     None if board is None else int(board), bool(secret), int(created))
            for i, name, body, owner, board, secret, created in rows
        ]  # fmt: skip

    def count(self, kind: str) -> int:
        return int(self._run(f"SELECT COUNT(*) FROM {TABLES[kind]}")[0][0])

    def state(self, name: str) -> str | None:
        rows = self._run(f"SELECT value FROM {STATE_TABLE} WHERE name = %s", (name,))
        return str(rows[0][0]) if rows else None

    def set_state(self, name: str, value: str | None) -> None:
        if value is None:
            self._run(f"DELETE FROM {STATE_TABLE} WHERE name = %s", (name,))
        else:
            self._run(f"REPLACE INTO {STATE_TABLE} (name, value) VALUES (%s, %s)", (name, value))

    def optimize(self) -> None:
        """Merge each table's index after many writes (a rebuild does, when it wrote): until
        then both engines search the pieces each write added, and InnoDB also the list of
        what was deleted (measured: a query 10 to 100 times slower after 100,000 writes)."""
        self.create()
        for table in TABLES.values():
            self._note(f"optimize {table}")
            self._optimize(table)

    def clear(self) -> None:
        """Empty every table (tests, and a rebuild from nothing)."""
        self._run_many([(f"DELETE FROM {table}", [()]) for table in TABLES.values()])

    @contextmanager
    def count_queries(self) -> Iterator[QueryCount]:
        """Count the statements this thread sends the index inside the block."""
        counted = QueryCount()
        self._counts.current = counted
        try:
            yield counted
        finally:
            self._counts.current = None

    # -- running statements ------------------------------------------------------------

    def _note(self, sql: str) -> None:
        counted: QueryCount | None = getattr(self._counts, "current", None)
        if counted is not None:
            counted.statements.append(sql)

    def _run(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        self.create()
        self._note(sql)
        return self._execute(sql, params)

    def _run_many(self, statements: Sequence[tuple[str, Sequence[Sequence[Any]]]]) -> None:
        self.create()
        for sql, _ in statements:
            self._note(sql)
        self._execute_many(statements)
