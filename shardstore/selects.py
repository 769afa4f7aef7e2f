"""Reads planned as SELECTs and run together: every statement of a page's read step that
goes to one MySQL host is sent in one round trip (a multi-statement query).

A read step's loads need nothing of each other (a board, its owner and its list of pins),
so each plans its SELECTs and says how to make its answer from their rows (``Selects``);
``run_together`` then asks each host once for all of them (``Store.select_each``), where
running each load in turn would cost a round trip per statement. A host whose connection
cannot reach several shards, or a driver that sends one statement at a time (SQLite), is
asked statement by statement, with the same answers.
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
    """One SELECT on a shard's host; ``{db}`` in ``sql`` names that shard's database."""

    shard_id: int
    sql: str
    params: Sequence[Any]


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
