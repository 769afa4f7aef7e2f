"""Reads planned as SELECTs and run together: every statement of a page's read step that
goes to one MySQL host is sent in one round trip (a multi-statement query).

A read step's loads need nothing of each other (a board, its owner and its list of pins),
so each plans its SELECTs and says how to make its answer from their rows (``Selects``);
``run_together`` then asks each host once for all of them (``Store.select_each``), where
running each load in turn would cost a round trip per statement. A host whose connection
cannot reach several shards, or a driver that sends one statement at a time (SQLite), is
asked statement by statement, with the same answers. A host's SELECTs of objects, of
whatever tables, are one statement: one UNION ALL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")
U = TypeVar("U")
Rows = list[tuple[Any, ...]]


@dataclass(frozen=True)
class Select:
    """One SELECT on a shard's host; ``{db}`` in ``sql`` names that shard's database.
    ``ids``: for a SELECT of objects (rows of full ID, data and counts, whatever the
    table), the IDs it asks for: such SELECTs to one host go as one UNION ALL
    (``fewest_statements``)."""

    shard_id: int
    sql: str
    params: Sequence[Any]
    ids: frozenset[int] | None = None
    parts: int = 1  # the SELECTs that ``sql`` joins in a UNION ALL


class SelectRunner(Protocol):
    def select_each(self, selects: Sequence[Select]) -> list[Rows]:
        """The rows of each SELECT, in order."""
        ...


@dataclass(frozen=True)
class Selects(Generic[T]):
    """SELECTs to run on ``store`` and ``answer``, which makes the read's answer from the
    rows of each (in order)."""

    store: SelectRunner | None  # None: nothing to select
    selects: Sequence[Select]
    answer: Callable[[list[Rows]], T]

    @classmethod
    def computed(cls, compute: Callable[[], T]) -> Selects[T]:
        """A load that reads by other means (``compute``), after the planned ones."""
        return cls(None, (), lambda _: compute())

    def run(self) -> T:
        """These SELECTs on their own."""
        answer: T = run_together([self])[0]
        return answer

    def then(self, shape: Callable[[T], U]) -> Selects[U]:
        """The same SELECTs, the answer reshaped."""
        return Selects(self.store, self.selects, lambda found: shape(self.answer(found)))


def run_together(plans: Sequence[Selects[Any]]) -> list[Any]:
    """Each plan's answer, its SELECTs run together with the others' (one round trip per
    host and store for them all)."""
    rows: list[list[Rows]] = [[] for _ in plans]
    by_store: dict[int, list[int]] = {}
    for index, plan in enumerate(plans):
        if plan.selects:
            by_store.setdefault(id(plan.store), []).append(index)
    for indexes in by_store.values():
        store = plans[indexes[0]].store
        assert store is not None
        found = iter(store.select_each([s for i in indexes for s in plans[i].selects]))
        for index in indexes:
            rows[index] = [next(found) for _ in plans[index].selects]
    return [plan.answer(found) for plan, found in zip(plans, rows, strict=True)]


def fewest_statements(
    selects: Sequence[Select], max_union: int
) -> tuple[list[Select], Callable[[list[Rows]], list[Rows]]]:
    """The statements that answer ``selects`` on one host: its SELECTs of objects joined
    in UNION ALLs of at most ``max_union`` SELECTs, the others as they are; and how to give
    each of ``selects`` its own rows back from the statements' (an object's row to each
    SELECT that asked for its ID)."""
    answering: list[list[int]] = []  # for each statement, the indexes of the selects it joins
    width = 0  # the SELECTs of the last union
    for index in sorted(range(len(selects)), key=lambda i: selects[i].ids is None):
        select = selects[index]
        joins = (
            answering
            and select.ids is not None
            and selects[answering[-1][0]].ids is not None
            and width + select.parts <= max_union
        )
        if joins:
            answering[-1].append(index)
            width += select.parts
        else:
            answering.append([index])
            width = select.parts
    if len(answering) == len(selects):
        return list(selects), lambda found: found
    sent = [
        selects[joined[0]]
        if len(joined) == 1
        else Select(
            selects[joined[0]].shard_id,
            " UNION ALL ".join(selects[i].sql for i in joined),
            [param for i in joined for param in selects[i].params],
        )
        for joined in answering
    ]

    def spread(found: list[Rows]) -> list[Rows]:
        rows: list[Rows] = [[] for _ in selects]
        for joined, own in zip(answering, found, strict=True):
            if len(joined) == 1:
                rows[joined[0]] = own
                continue
            for row in own:
                for index in joined:
                    if row[0] in selects[index].ids:  # type: ignore[operator]
                        rows[index].append(row)
        return rows

    return sent, spread
