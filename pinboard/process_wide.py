"""One object a process shares (its data plane, its search index), made on first use."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class ProcessWide(Generic[T]):
    """The process's one ``T``: ``make()`` builds it on the first ``get()``, once, however
    many threads ask at the same time; ``use()`` swaps it (tests)."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        #: Held while the object is made or swapped; re-entrant, so a swap may hold it
        #: while it reads ``current``.
        self.lock = threading.RLock()
        #: The object, or None until the first ``get()`` (or after ``use(None)``).
        self.current: T | None = None

    def get(self) -> T:
        current = self.current
        if current is None:
            with self.lock:
                if self.current is None:
                    self.current = self._make()
                current = self.current
        return current

    def use(self, new: T | None) -> T | None:
        """Swap the object; returns the previous one (None if none was made)."""
        with self.lock:
            previous, self.current = self.current, new
        return previous
