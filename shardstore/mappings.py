"""Mapping tables: ``from_id -> to_id`` edges ordered by ``sequence``, on the from-ID's shard.

One direction per table (``album_has_photos``); the reverse is its own table
(``photo_in_albums``) on the to-ID's shard, written by the same ``add`` or
``remove`` call right after the forward row. Counts live in ``mapping_counts``
and change in the same transaction as the row, so a count is one key read.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from . import cursors
from .backends import batched
from .catalog import Relation
from .ids import group_by_shard, shard_of
from .interface import MappingTableInterface, Page, ShardAccess
from .selects import Rows, Select, Selects

if TYPE_CHECKING:
    from .backends import Session

MAX_PAGE = 1000
#: Pairs per query in ``present`` (an OR of key lookups).
PAIRS_PER_QUERY = 500


def now_sequence() -> int:
    """The default sequence: microseconds since the epoch, so newer rows sort later."""
    return time.time_ns() // 1000


class MappingTable:
    """One ``noun_verb_noun`` table on every shard."""

    def __init__(self, store: ShardAccess, relation: Relation) -> None:
        self._store = store
        self.relation = relation
        name = relation.name
        self._contains = f"SELECT 1 FROM {{db}}.{name} WHERE from_id = %s AND to_id = %s"
        self._sequence = f"SELECT sequence FROM {{db}}.{name} WHERE from_id = %s AND to_id = %s"
        self._filter = f"SELECT to_id FROM {{db}}.{name} WHERE from_id = %s AND to_id IN "
        self._count = "SELECT n FROM {db}.mapping_counts WHERE from_id = %s AND relation = %s"
        self._count_many = (
            "SELECT from_id, n FROM {db}.mapping_counts WHERE relation = %s AND from_id IN "
        )
        self._page = {
            descending: _page_sql(name, descending, after=False) for descending in (True, False)
        }
        self._page_after = {
            descending: _page_sql(name, descending, after=True) for descending in (True, False)
        }
        # page_many unions one of these per list; the derived table lets each keep its LIMIT.
        newest = _page_sql(name, descending=True, after=False, with_from=True)
        self._page_one_of_many = f"SELECT * FROM ({newest}) AS p"

    # -- writes ---------------------------------------------------------------

    def add(self, from_id: int | str, to_id: int | str, *, sequence: int | None = None) -> bool:
        """Map ``from_id`` to ``to_id`` (and the inverse); adding a pair twice keeps one row.

        Returns whether the forward row is new.
        """
        from_id, to_id = self._check_writable(from_id, to_id)
        sequence = now_sequence() if sequence is None else int(sequence)
        return self._write_both(
            from_id, to_id, lambda s, rel, f, t: _insert(s, rel, f, t, sequence)
        )

    def remove(self, from_id: int | str, to_id: int | str) -> bool:
        """Unmap the pair (and its inverse). Returns whether the forward row was there."""
        from_id, to_id = self._check_writable(from_id, to_id)
        return self._write_both(from_id, to_id, _delete)

    def repair_inverse(self, from_id: int | str, to_id: int | str) -> bool:
        """Make the inverse row of the pair agree with the forward row, the truth: present
        with the forward row's sequence, or absent. Returns whether it changed anything.

        For ``reconcile``. Racing a live ``add`` or ``remove`` of the same pair can at
        worst leave a forward row without its inverse, which the next run completes.
        """
        from_id, to_id = self._check_writable(from_id, to_id)
        inverse = self.relation.inverse
        if inverse is None:
            raise ValueError(f"{self.relation.name} has no inverse")
        with self._store.session(shard_of(from_id)) as session:
            rows = session.query(self._sequence, (from_id, to_id))

        def write(session: Session) -> bool:
            if rows:
                return _insert(session, inverse, to_id, from_id, int(rows[0][0]))
            return _delete(session, inverse, to_id, from_id)

        return self._store.transaction(shard_of(to_id), write)

    def _write_both(self, from_id: int, to_id: int, write) -> bool:  # type: ignore[no-untyped-def]
        # Forward first, then the inverse: a crash in between leaves a forward
        # row without its inverse, which `reconcile` completes (add) or removes
        # the orphan inverse of (remove). Colocated ends share one transaction.
        steps = [(self.relation.name, from_id, to_id)]
        if self.relation.inverse:
            steps.append((self.relation.inverse, to_id, from_id))
        changed: list[bool] = []
        for shard_id, shard_steps in _in_shard_order(steps):

            def run(
                session: Session, steps: list[tuple[str, int, int]] = shard_steps
            ) -> list[bool]:
                return [bool(write(session, *step)) for step in steps]

            changed += self._store.transaction(shard_id, run)
        return changed[0]

    def _check_writable(self, from_id: int | str, to_id: int | str) -> tuple[int, int]:
        if self.relation.inverse_of:
            raise ValueError(f"{self.relation.name} is written through {self.relation.inverse_of}")
        return self._check(from_id, to_id)

    def _check(self, from_id: int | str, to_id: int | str) -> tuple[int, int]:
        expect = self._store.catalog.expect
        return expect(from_id, self.relation.from_type), expect(to_id, self.relation.to_type)

    # -- reads ----------------------------------------------------------------

    def page(
        self,
        from_id: int | str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        oldest_first: bool = False,
    ) -> Page:
        """One page of to-IDs, newest first (highest sequence) unless ``oldest_first``."""
        rows, next_cursor = self.rows_page(
            from_id, limit=limit, cursor=cursor, oldest_first=oldest_first
        )
        return Page([to_id for to_id, _ in rows], next_cursor)

    def rows_page(
        self,
        from_id: int | str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        oldest_first: bool = False,
    ) -> tuple[list[tuple[int, int]], str | None]:
        """One page of ``(to_id, sequence)`` rows and the next page's cursor (None: the last)."""
        from_id = self._store.catalog.expect(from_id, self.relation.from_type)
        limit = check_limit(limit)
        descending = not oldest_first
        params: tuple[int, ...]
        if cursor is None:
            sql, params = self._page[descending], (from_id, limit + 1)
        else:
            sequence, last_id = cursors.decode(cursor)
            sql = self._page_after[descending]
            params = (from_id, sequence, sequence, last_id, limit + 1)
        with self._store.session(shard_of(from_id)) as session:
            rows = [(int(to_id), int(sequence)) for to_id, sequence in session.query(sql, params)]
        if len(rows) <= limit:
            return rows, None
        last_id, last_sequence = rows[limit - 1]
        return rows[:limit], cursors.encode(last_sequence, last_id)

    def page_many(self, from_ids: Iterable[int | str], *, limit: int = 50) -> dict[int, Page]:
        """The first page (newest first) of many lists: one query per shard touched
        (per few hundred lists on a shard, the most one UNION ALL may join)."""
        limit = check_limit(limit)
        rows = self.rows_many(from_ids, limit=limit + 1)
        return {from_id: _to_page(list(entries), limit) for from_id, entries in rows.items()}

    def rows_many(
        self, from_ids: Iterable[int | str], *, limit: int
    ) -> dict[int, list[tuple[int, int]]]:
        """The newest ``limit`` ``(to_id, sequence)`` rows of each list, as ``page_many`` reads them."""
        return self.selecting_rows(from_ids, limit=limit).run()

    def selecting_rows(
        self, from_ids: Iterable[int | str], *, limit: int
    ) -> Selects[dict[int, list[tuple[int, int]]]]:
        """``rows_many`` as SELECTs to run with others (``selects.run_together``): a shard's
        lists in one UNION ALL (of at most the dialect's limit)."""
        wanted = self._store.catalog.expect_all(from_ids, self.relation.from_type)
        selects = []
        for shard_id, ids in group_by_shard(wanted).items():
            for batch in batched(ids, self._store.dialect(shard_id).max_union):
                sql = " UNION ALL ".join([self._page_one_of_many] * len(batch))
                params = [value for from_id in batch for value in (from_id, limit)]
                selects.append(Select(shard_id, sql, params))

        def answer(found: list[Rows]) -> dict[int, list[tuple[int, int]]]:
            rows_by_from: dict[int, list[tuple[int, int]]] = {from_id: [] for from_id in wanted}
            for rows in found:
                for from_id, to_id, sequence in rows:
                    rows_by_from[from_id].append((to_id, sequence))
            return rows_by_from

        return Selects(self._store, selects, answer)

    def scan(self, shard_id: int, *, batch: int = 1000) -> Iterator[list[tuple[int, int, int]]]:
        """Every ``(from_id, to_id, sequence)`` row of this table on one shard, in key
        order, ``batch`` rows at a time (for reconcile, rebuilds and backfills)."""
        name = self.relation.name
        first = (
            f"SELECT from_id, to_id, sequence FROM {{db}}.{name} ORDER BY from_id, to_id LIMIT %s"
        )
        after = (
            f"SELECT from_id, to_id, sequence FROM {{db}}.{name}"
            " WHERE from_id > %s OR (from_id = %s AND to_id > %s) ORDER BY from_id, to_id LIMIT %s"
        )
        last: tuple[int, int] | None = None
        while True:
            with self._store.session(shard_id) as session:
                if last is None:
                    rows = session.query(first, (batch,))
                else:
                    rows = session.query(after, (last[0], last[0], last[1], batch))
            if not rows:
                return
            yield [(int(f), int(t), int(s)) for f, t, s in rows]
            last = (int(rows[-1][0]), int(rows[-1][1]))

    def present(self, pairs: Iterable[tuple[int, int]]) -> set[tuple[int, int]]:
        """Which of these ``(from_id, to_id)`` pairs have a row: one query per shard
        (per ``PAIRS_PER_QUERY`` pairs)."""
        check = self._check
        wanted = list(dict.fromkeys(check(f, t) for f, t in pairs))
        found: set[tuple[int, int]] = set()
        by_shard: dict[int, list[tuple[int, int]]] = {}
        for pair in wanted:
            by_shard.setdefault(shard_of(pair[0]), []).append(pair)
        for shard_id, shard_pairs in by_shard.items():
            with self._store.session(shard_id) as session:
                for batch in batched(shard_pairs, PAIRS_PER_QUERY):
                    keys = " OR ".join(["(from_id = %s AND to_id = %s)"] * len(batch))
                    sql = f"SELECT from_id, to_id FROM {{db}}.{self.relation.name} WHERE {keys}"
                    params = [value for pair in batch for value in pair]
                    found.update((int(f), int(t)) for f, t in session.query(sql, params))
        return found

    def count(self, from_id: int | str) -> int:
        """How many rows ``from_id`` has: one primary-key read."""
        from_id = self._store.catalog.expect(from_id, self.relation.from_type)
        with self._store.session(shard_of(from_id)) as session:
            rows = session.query(self._count, (from_id, self.relation.name))
        return int(rows[0][0]) if rows else 0

    def count_many(self, from_ids: Iterable[int | str]) -> dict[int, int]:
        """Counts of many lists: one query per shard touched."""
        wanted = self._store.catalog.expect_all(from_ids, self.relation.from_type)
        counts = dict.fromkeys(wanted, 0)
        for shard_id, ids in group_by_shard(wanted).items():
            sql = self._count_many + _placeholders(len(ids))
            with self._store.session(shard_id) as session:
                for from_id, n in session.query(sql, [self.relation.name, *ids]):
                    counts[int(from_id)] = int(n)
        return counts

    def contains(self, from_id: int | str, to_id: int | str) -> bool:
        """Whether the pair is mapped."""
        from_id, to_id = self._check(from_id, to_id)
        with self._store.session(shard_of(from_id)) as session:
            return bool(session.query(self._contains, (from_id, to_id)))

    def filter(self, from_id: int | str, candidates: Iterable[int | str]) -> list[int]:
        """Which of ``candidates`` are mapped from ``from_id`` (in the order given): one query."""
        catalog = self._store.catalog
        from_id = catalog.expect(from_id, self.relation.from_type)
        wanted = list(dict.fromkeys(catalog.expect_all(candidates, self.relation.to_type)))
        if not wanted:
            return []
        with self._store.session(shard_of(from_id)) as session:
            rows = session.query(self._filter + _placeholders(len(wanted)), [from_id, *wanted])
        mapped = {int(row[0]) for row in rows}
        return [candidate for candidate in wanted if candidate in mapped]


def all_ids(table: MappingTableInterface, from_id: int, *, batch: int = 1000) -> list[int]:
    """Every to-ID of a list, newest first, a page of ``batch`` at a time (for lists
    known to be short, such as one user's collections; stream long ones with ``pages_of``)."""
    return [to_id for page in pages_of(table, from_id, batch=batch) for to_id in page]


def pages_of(
    table: MappingTableInterface, from_id: int, *, batch: int = 1000
) -> Iterator[list[int]]:
    """A list's to-IDs, newest first, ``batch`` at a time; the cursor keeps its place while
    the caller removes the rows it was given."""
    cursor = None
    while True:
        page = table.page(from_id, limit=batch, cursor=cursor)
        if page.ids:
            yield page.ids
        if page.cursor is None:
            return
        cursor = page.cursor


def _page_sql(name: str, descending: bool, *, after: bool, with_from: bool = False) -> str:
    order, beyond = ("DESC", "<") if descending else ("ASC", ">")
    columns = "from_id, to_id, sequence" if with_from else "to_id, sequence"
    where = "from_id = %s"
    if after:
        where += f" AND (sequence {beyond} %s OR (sequence = %s AND to_id {beyond} %s))"
    return (
        f"SELECT {columns} FROM {{db}}.{name} WHERE {where}"
        f" ORDER BY sequence {order}, to_id {order} LIMIT %s"
    )


def _to_page(rows: Sequence[tuple[int, int]], limit: int) -> Page:
    ids = [to_id for to_id, _ in rows[:limit]]
    if len(rows) <= limit:
        return Page(ids, None)
    last_id, last_sequence = rows[limit - 1]
    return Page(ids, cursors.encode(int(last_sequence), int(last_id)))


def check_limit(limit: int) -> int:
    """``limit`` if it is a page size this store serves; ValueError otherwise."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"limit must be an int in 1..{MAX_PAGE}")
    return limit


def _placeholders(n: int) -> str:
    return "(" + ",".join(["%s"] * n) + ")"


def _in_shard_order(
    steps: list[tuple[str, int, int]],
) -> list[tuple[int, list[tuple[str, int, int]]]]:
    """Steps grouped by shard, keeping the order in which shards are first written."""
    groups: dict[int, list[tuple[str, int, int]]] = {}
    for step in steps:
        groups.setdefault(shard_of(step[1]), []).append(step)
    return list(groups.items())


def _insert(session: Session, relation: str, from_id: int, to_id: int, sequence: int) -> bool:
    dialect = session.dialect
    sql = f"{dialect.insert_ignore} INTO {{db}}.{relation} (from_id, to_id, sequence) VALUES (%s, %s, %s)"
    if session.execute(sql, (from_id, to_id, sequence)) == 0:
        return False
    session.execute(dialect.add_to_count, (from_id, relation, 1))
    return True


def _delete(session: Session, relation: str, from_id: int, to_id: int) -> bool:
    sql = f"DELETE FROM {{db}}.{relation} WHERE from_id = %s AND to_id = %s"
    if session.execute(sql, (from_id, to_id)) == 0:
        return False
    session.execute(session.dialect.add_to_count, (from_id, relation, -1))
    return True
