"""Reads of cached tables that a page makes at one step, together.

A page reads in steps, each needing what the one before found: a collection's page reads
the collection, its owner and its list of items, then the items. A step's reads are independent of
each other, so ``read_together`` sends them as one multi-get to each memcached server
they live on (pools often share servers), where reading them one by one would cost a
round trip each. A cold step's claims and fills go together too (readthrough.py): warm,
a step costs one round trip per server however many reads it makes; cold, one more for
the claims, the loads, a write of fills, and one more if a list was loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from .. import metrics
from .readthrough import Through, read_through_all

T = TypeVar("T")
U = TypeVar("U")
A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")
D = TypeVar("D")


@dataclass(frozen=True)
class Read(Generic[T]):
    """A read through the cache (``through``), and ``shape``, which makes its answer from
    the values of its keys."""

    through: Through | None  # None: no keys
    shape: Callable[[dict[str, bytes]], T]

    @classmethod
    def done(cls, answer: T) -> Read[T]:
        """A read a page may skip (what the reader may not see): ``answer``, for no key."""
        return cls(None, lambda _: answer)

    def run(self) -> T:
        """The read on its own."""
        return read_together(self)[0]

    def then(self, shape: Callable[[T], U]) -> Read[U]:
        """The same keys, the answer reshaped."""
        return Read(self.through, lambda values: shape(self.shape(values)))


@overload
def read_together(a: Read[A], /) -> tuple[A]: ...
@overload
def read_together(a: Read[A], b: Read[B], /) -> tuple[A, B]: ...
@overload
def read_together(a: Read[A], b: Read[B], c: Read[C], /) -> tuple[A, B, C]: ...
@overload
def read_together(a: Read[A], b: Read[B], c: Read[C], d: Read[D], /) -> tuple[A, B, C, D]: ...
def read_together(*reads: Read[Any]) -> tuple[Any, ...]:
    """The answers of ``reads``, their keys read through together (``read_through_all``)."""
    metrics.READ_TOGETHER.observe(len(reads))
    values = iter(read_through_all([read.through for read in reads if read.through]))
    return tuple(read.shape(next(values) if read.through else {}) for read in reads)
