"""The index on MySQL deployments: InnoDB FULLTEXT in a database of its own.

``PINBOARD_SEARCH_URL=mysql://user:password@host:port/name[?ssl_ca=/path/ca.pem]``
names it; the user needs every privilege on that database, which the index creates
with its tables on first use. One table per kind, each with a FULLTEXT index over
both fields (what must match) and one over the primary field (a match there adds
``NAME_WEIGHT - 1`` times its relevance).

InnoDB leaves words shorter than ``innodb_ft_min_token_size`` (3) out of its index,
and stopwords ("the", "of"...) unless the index was made without them. So every
connection here has ``innodb_ft_enable_stopword`` off (the tables are made, and
rebuilt by ``optimize``, without them), and a word shorter than 3 characters
is stored and searched padded with underscores to 3 ("ai" is ``ai_``): words here
never hold an underscore (``words``), so a padded word matches only itself (and no
prefix is that short). Both backends then find the same documents.
"""

from __future__ import annotations

import select
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

from shardstore.backends.pool import ConnectionPool, discard

from .index import NAME_WEIGHT, STATE_TABLE, TABLES, IndexUnavailable, Row, SearchIndex
from .words import Query

try:
    import MySQLdb
except ImportError:  # the embedded default does not need the MySQL client library
    MySQLdb = None

#: InnoDB's default ``innodb_ft_min_token_size``: shorter words are padded to it.
MIN_WORD = 3
PAD = "_"
MAX_IDLE = 8
KEY = "index"
# Client errors for a connection that is gone: the statement may go again on a new one.
_GONE = {2006, 2013, 2055}
T = TypeVar("T")


def padded(word: str) -> str:
    return word.ljust(MIN_WORD, PAD)


def boolean_query(query: Query) -> str:
    """InnoDB's boolean-mode spelling: every word required (``+``), the last one as a prefix
    if the query's is. Words are letters and digits: no operator can come from a
    pinner's text."""
    terms = [f"+{padded(term)}" for term in query.terms]
    if query.prefix:
        terms[-1] = f"+{query.terms[-1]}*"
    return " ".join(terms)


def connection_params(url: str) -> dict[str, Any]:
    parts = urlsplit(url)
    name = parts.path.strip("/")
    query = parse_qs(parts.query)
    if parts.scheme != "mysql" or not parts.hostname or not name or set(query) - {"ssl_ca"}:
        raise ValueError(
            "a MySQL search index is mysql://user:password@host:port/name[?ssl_ca=/path/ca.pem]"
        )
    params: dict[str, Any] = {
        "host": parts.hostname,
        "port": parts.port or 3306,
        "user": unquote(parts.username or "root"),
        "password": unquote(parts.password or ""),
        "database": name,
        "charset": "utf8mb4",
        "autocommit": True,
        "connect_timeout": 3,
        # Every connection, not only the one that makes the tables: a FULLTEXT index is
        # made again, by this session's setting, when OPTIMIZE TABLE rebuilds its table.
        "init_command": "SET SESSION innodb_ft_enable_stopword = OFF",
    }
    if "ssl_ca" in query:
        params["ssl"] = {"ca": query["ssl_ca"][0]}
    return params


class MySQLIndex(SearchIndex):
    def __init__(self, url: str) -> None:
        if MySQLdb is None:
            raise ImportError(
                "a MySQL search index needs mysqlclient: pip install -r requirements-mysql.txt"
            )
        super().__init__()
        self._params = connection_params(url)
        self.database = self._params["database"]
        self._pool = ConnectionPool(self._connect, max_idle=MAX_IDLE)

    def _connect(self, key: object) -> Any:
        try:
            return MySQLdb.connect(**self._params)
        except MySQLdb.Error as exc:
            raise IndexUnavailable(f"search database {self.database}: {exc}") from exc

    def _with_connection(self, work: Callable[[Any], T]) -> T:
        """``work`` on a pooled connection; once more on a new one if the pooled one had
        died meanwhile (every statement here can run twice: replaces, deletes, reads)."""
        connection, reused = self._pool.acquire(KEY)
        for attempt in (1, 2):
            try:
                if reused and not _still_open(connection):
                    raise MySQLdb.OperationalError(2006, "closed while idle")
                result = work(connection)
            except MySQLdb.Error as exc:
                discard(connection)
                if attempt == 1 and reused and exc.args and exc.args[0] in _GONE:
                    connection, reused = self._connect(KEY), False
                    continue
                raise IndexUnavailable(f"search database {self.database}: {exc}") from exc
            except BaseException:
                discard(connection)
                raise
            self._pool.release(KEY, connection)
            return result
        raise AssertionError("unreachable")

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        def run(connection: Any) -> list[Row]:
            cursor = connection.cursor()
            cursor.execute(sql, tuple(params))
            return list(cursor.fetchall())

        return self._with_connection(run)

    def _execute_many(self, statements: Sequence[tuple[str, Sequence[Sequence[Any]]]]) -> None:
        def run(connection: Any) -> None:
            cursor = connection.cursor()
            cursor.execute("BEGIN")
            for sql, rows in statements:
                cursor.executemany(sql, [tuple(row) for row in rows])
            cursor.execute("COMMIT")

        self._with_connection(run)

    def _create_tables(self) -> None:
        server_params = {k: v for k, v in self._params.items() if k != "database"}
        try:
            connection = MySQLdb.connect(**server_params)
        except MySQLdb.Error as exc:
            raise IndexUnavailable(f"search database {self.database}: {exc}") from exc
        try:
            cursor = connection.cursor()
            cursor.execute("SELECT @@innodb_ft_min_token_size")
            (smallest,) = cursor.fetchone()
            if int(smallest) > MIN_WORD:
                raise ValueError(
                    f"the search database's innodb_ft_min_token_size is {smallest}:"
                    f" it must be at most {MIN_WORD}"
                )
            cursor.execute(f"CREATE DATABASE IF NOT EXISTS `{self.database}` CHARACTER SET utf8mb4")
            cursor.execute(f"USE `{self.database}`")
            for table in TABLES.values():
                cursor.execute(
                    f"CREATE TABLE IF NOT EXISTS {table} ("
                    " id BIGINT NOT NULL PRIMARY KEY, name TEXT NOT NULL, body TEXT NOT NULL,"
                    " owner_id BIGINT NOT NULL, board_id BIGINT NULL, secret TINYINT NOT NULL,"
                    " created BIGINT NOT NULL, KEY by_board (board_id),"
                    " FULLTEXT KEY words (name, body), FULLTEXT KEY name_words (name))"
                    " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
                )
            cursor.execute(
                f"CREATE TABLE IF NOT EXISTS {STATE_TABLE} ("
                " name VARCHAR(64) NOT NULL PRIMARY KEY, value TEXT NOT NULL)"
                " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
            )
        except MySQLdb.Error as exc:
            raise IndexUnavailable(f"search database {self.database}: {exc}") from exc
        finally:
            connection.close()

    def _optimize(self, table: str) -> None:
        # InnoDB rebuilds a table with FULLTEXT indexes in place, holding its writes (the
        # tasks' wait, or are tried again) but not its reads.
        self._execute(f"OPTIMIZE TABLE {table}")

    def _search_sql(self, table: str, query: Query) -> tuple[str, str, list[Any]]:
        """Relevance over both fields, plus ``NAME_WEIGHT - 1`` times that of the primary
        one; with a prefix, the same again for the whole words (InnoDB ranks a word and a
        longer one it starts alike: so the whole word ranks first)."""
        against = "AGAINST (%s IN BOOLEAN MODE)"
        spellings = [boolean_query(query)]
        if query.prefix:
            spellings.append(boolean_query(replace(query, prefix=False)))
        parts: list[str] = []
        params: list[Any] = []
        for spelled in spellings:
            parts += [f"MATCH(name, body) {against}", f"{NAME_WEIGHT - 1} * MATCH(name) {against}"]
            params += [spelled, spelled]
        return " + ".join(parts), f"MATCH(name, body) {against}", [*params, spellings[0]]

    def _stored(self, text: str) -> str:
        return " ".join(padded(word) for word in text.split())

    def _read(self, stored: str) -> str:
        return " ".join(word.rstrip(PAD) for word in stored.split())

    def close(self) -> None:
        self._pool.close()


def _still_open(connection: Any) -> bool:
    """A connection the server closed has its end-of-stream waiting to be read; a healthy
    idle one has nothing. One poll(), no round trip."""
    poller = select.poll()
    poller.register(connection.fileno(), select.POLLIN)
    return not poller.poll(0)
