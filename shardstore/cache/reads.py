"""Reads of cached tables that a page makes at one step, together.

A page reads in steps, each needing what the one before found: a board page reads the
board, its owner and its list of pins, then the pins. A step's reads are independent of
each other, so ``read_together`` sends them as one multi-get to each memcached server
they live on (pools often share servers), where reading them one by one would cost a
round trip each. Each read then finishes as it would alone: its misses go through the
read-through fill of its own table, and a warm step costs no more than one round trip.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from .pools import CachePool, get_across

T = TypeVar("T")
U = TypeVar("U")
A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")
D = TypeVar("D")


@dataclass(frozen=True)
class Read(Generic[T]):
    """A read of ``keys`` of one pool, and ``finish``, which makes its answer from what the
    pool held of them (loading and filling the misses)."""

    pool: CachePool | None  # None: no keys
    keys: list[str]
    finish: Callable[[dict[str, bytes]], T]

    @classmethod
    def done(cls, answer: T) -> Read[T]:
        """A read a page may skip (another's secret boards): ``answer``, for no key."""
        return cls(None, [], lambda _: answer)

    def run(self) -> T:
        """The read on its own."""
        return self.finish(self.pool.get_many(self.keys) if self.pool else {})

    def then(self, shape: Callable[[T], U]) -> Read[U]:
        """The same keys, the answer reshaped."""
        return Read(self.pool, self.keys, lambda held: shape(self.finish(held)))


@overload
def read_together(a: Read[A], b: Read[B], /) -> tuple[A, B]: ...
@overload
def read_together(a: Read[A], b: Read[B], c: Read[C], /) -> tuple[A, B, C]: ...
@overload
def read_together(a: Read[A], b: Read[B], c: Read[C], d: Read[D], /) -> tuple[A, B, C, D]: ...
def read_together(*reads: Read[Any]) -> tuple[Any, ...]:
    """The answers of ``reads``, their keys fetched in one multi-get per server."""
    asked = [(read.pool, read.keys) for read in reads if read.pool]
    held = iter(get_across(asked))
    return tuple(read.finish(next(held) if read.pool else {}) for read in reads)
