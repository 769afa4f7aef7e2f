"""One object a process shares (its data plane, its search index), made on first use.

A forked process makes its own: a Celery worker's main process may have made one (its
metrics' scrape reads the shard map) before it forks a new pool process, and a copy's
connections and threads are its parent's, not the child's.
"""

from __future__ import annotations

import os
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
        self._pid = os.getpid()  # the process ``current`` was made or set in

    def get(self) -> T:
        current = self.current
        if current is None or self._pid != os.getpid():
            with self.lock:
                if self.current is None or self._pid != os.getpid():
                    # (A parent's object is left as it is: closing it would close the
                    # parent's connections too.)
                    self.current, self._pid = self._make(), os.getpid()
                current = self.current
        return current

    def use(self, new: T | None) -> T | None:
        """Swap the object; returns the previous one (None if none was made)."""
        with self.lock:
            previous, self.current, self._pid = self.current, new, os.getpid()
        return previous
