"""Locks that keep two operations off one host, and off the config (``CONFIG``), at once:
all or nothing (``HostsBusy`` otherwise), held for a whole run, checked again before each
step (``LockCheck``: a ZooKeeper lock goes with its session).

Beside the locks, each run leaves a mark (``Mark``) that outlives its process: written
before its first step, removed once its journal entry is closed. A lock says a run is
alive; a mark says one is open, in whichever journal it was written (the site's control
database, a ``--journal`` file), so that a run open in one journal holds its hosts
against operations journaled in another (``plans.run``)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from ..exceptions import ShardStoreError
from .config_source import SourceUnavailable
from .zookeeper_source import answered

log = logging.getLogger(__name__)


class HostsBusy(ShardStoreError):
    """Another operation holds a lock on a host this plan touches."""


class LockLost(ShardStoreError):
    """A lock the run held is no longer held (its ZooKeeper session ended)."""


class LocksUnreachable(HostsBusy):
    """ZooKeeper does not answer, so no lock can be taken: the plan is refused."""


#: The lock every operation that publishes a config document holds for its whole run.
CONFIG = "@config"


#: Raises LockLost if a lock taken by ``hold`` is no longer held.
LockCheck = Callable[[], None]


@dataclass(frozen=True)
class Mark:
    """A run open in ``journal`` (its entry not closed), holding ``locks``."""

    key: str
    journal: str
    locks: tuple[str, ...]
    what: str

    def encoded(self) -> bytes:
        return json.dumps(asdict(self)).encode()

    @classmethod
    def decoded(cls, data: bytes) -> Mark:
        fields = json.loads(data)
        return cls(fields["key"], fields["journal"], tuple(fields["locks"]), fields["what"])


class Locks(Protocol):
    def hold(
        self, hosts: Sequence[str], *, owner: str
    ) -> contextlib.AbstractContextManager[LockCheck]:
        """Hold every host's lock for the block, or raise HostsBusy at once."""
        ...

    def next_term(self) -> int:
        """A term greater than every one drawn before (``terms.py``)."""
        ...

    def mark(self, mark: Mark) -> None:
        """Leave ``mark`` until ``unmark``; raises if it cannot be written."""
        ...

    def unmark(self, key: str) -> None:
        """Remove the mark ``key`` (gone already: nothing to do)."""
        ...

    def marks(self) -> list[Mark]:
        """Every mark left."""
        ...


class FileLocks:
    """Host locks as ``flock``ed files in a directory: every process of one machine (the
    embedded default, the local cluster) sees them; the kernel drops a dead holder's."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    @contextlib.contextmanager
    def hold(self, hosts: Sequence[str], *, owner: str) -> Iterator[LockCheck]:
        self.directory.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as held:
            for host in sorted(set(hosts)):
                path = self.directory / f"{_safe(host)}.lock"
                handle = held.enter_context(open(path, "a+"))
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    handle.seek(0)
                    holder = handle.read() or "another operation"
                    raise HostsBusy(f"{_what(host)} is locked by: {holder}") from None
                handle.truncate(0)
                handle.write(f"{owner} (pid {os.getpid()})")
                handle.flush()
            yield _held_while_alive  # a flock lasts as long as its process

    def next_term(self) -> int:
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / "term", "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.seek(0)
            number = int(handle.read() or 0) + 1
            handle.truncate(0)
            handle.write(str(number))
            handle.flush()
            os.fsync(handle.fileno())
        return number

    def mark(self, mark: Mark) -> None:
        marks = self.directory / "open"
        marks.mkdir(parents=True, exist_ok=True)
        written = marks / f".{_safe(mark.key)}.new"
        with open(written, "wb") as handle:
            handle.write(mark.encoded())
            handle.flush()
            os.fsync(handle.fileno())
        written.rename(marks / f"{_safe(mark.key)}.json")

    def unmark(self, key: str) -> None:
        (self.directory / "open" / f"{_safe(key)}.json").unlink(missing_ok=True)

    def marks(self) -> list[Mark]:
        return [Mark.decoded(path.read_bytes()) for path in sorted((self.directory / "open").glob("*.json"))]  # fmt: skip


class ZooKeeperLocks:
    """Host locks as kazoo lock recipes under ``<root>/locks/<host>``: held by a live
    ZooKeeper session, so a crashed operator's locks go with its session.

    Nothing is asked of ZooKeeper while the connection is down, and a check or a release
    waits at most ``timeout`` seconds: kazoo holds a request until ZooKeeper answers again,
    and its lock recipe retries without end, so an operator cut off from ZooKeeper would
    otherwise wait with its plan half run instead of stopping."""

    def __init__(self, client: Any, root: str, *, timeout: float = 5.0) -> None:
        self.client = client
        self.root = "/" + root.strip("/")
        self.timeout = timeout

    @contextlib.contextmanager
    def hold(self, hosts: Sequence[str], *, owner: str) -> Iterator[LockCheck]:
        acquired = []
        try:
            for host in sorted(set(hosts)):
                if not self.client.connected:
                    raise LocksUnreachable(f"cannot lock {_what(host)}: ZooKeeper is unreachable")
                lock = self.client.Lock(f"{self.root}/locks/{_safe(host)}", identifier=owner)
                if not lock.acquire(blocking=False):
                    holders = ", ".join(lock.contenders()) or "another operation"
                    raise HostsBusy(f"{_what(host)} is locked by: {holders}")
                acquired.append(lock)
            yield lambda: self._check(acquired)
        finally:
            for lock in reversed(acquired):
                self._release(lock)

    def next_term(self) -> int:
        """The counter at ``<root>/term``, moved on by compare-and-set."""
        from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

        path = f"{self.root}/term"
        while True:
            try:
                data, stat = self._ask(self.client.get_async, path)
            except NoNodeError:
                try:
                    self._ask(self.client.ensure_path_async, self.root)
                    self._ask(lambda p: self.client.create_async(p, b"1"), path)
                    return 1
                except NodeExistsError:
                    continue
            number = int(data or b"0") + 1
            try:
                value, version = str(number).encode(), stat.version
                self._ask(lambda p: self.client.set_async(p, value, version=version), path)  # noqa: B023 - called at once
                return number
            except BadVersionError:
                continue

    def mark(self, mark: Mark) -> None:
        """A persistent node ``<root>/open/<key>`` (no session ends it)."""
        self._ask(self.client.ensure_path_async, f"{self.root}/open")
        data = mark.encoded()
        self._ask(
            lambda p: self.client.create_async(p, data), f"{self.root}/open/{_safe(mark.key)}"
        )

    def unmark(self, key: str) -> None:
        from kazoo.exceptions import NoNodeError

        with contextlib.suppress(NoNodeError):
            self._ask(self.client.delete_async, f"{self.root}/open/{_safe(key)}")

    def marks(self) -> list[Mark]:
        from kazoo.exceptions import NoNodeError

        try:
            names = self._ask(self.client.get_children_async, f"{self.root}/open")
        except NoNodeError:
            return []
        found = []
        for name in sorted(names):
            with contextlib.suppress(NoNodeError):  # unmarked meanwhile
                found.append(Mark.decoded(self._ask(self.client.get_async, f"{self.root}/open/{name}")[0]))  # fmt: skip
        return found

    def _check(self, acquired: list[Any]) -> None:
        """Each lock's node is still there, owned by this session (a session that expired
        took its nodes with it, and another operator may hold the lock now). A connection
        that dropped is waited for, at most ``timeout`` seconds: a process that was stalled
        finds its session whole, or learns it is gone, rather than failing at the blip."""
        deadline = time.monotonic() + self.timeout
        for lock in acquired:
            node = f"{lock.path}/{lock.node}"
            while True:
                _reconnected(self.client, deadline)
                try:
                    stat = self._ask(self.client.exists_async, node)
                    break
                except SourceUnavailable as exc:
                    if time.monotonic() >= deadline:
                        raise LockLost(f"lock {lock.path} cannot be checked: {exc}") from None
            session = self.client.client_id[0] if self.client.client_id else None
            if stat is None or stat.ephemeralOwner != session:
                raise LockLost(f"lock {lock.path} was lost with its ZooKeeper session")

    def _release(self, lock: Any) -> None:
        from kazoo.exceptions import NoNodeError

        try:
            self._ask(self.client.delete_async, f"{lock.path}/{lock.node}")
        except NoNodeError:
            pass  # gone with an expired session
        except SourceUnavailable as exc:
            log.warning(
                "lock %s not released (%s): it goes when this process's session ends",
                lock.path,
                exc,
            )

    def _ask(self, request: Callable[[str], Any], path: str) -> Any:
        """``request(path)``'s answer within ``timeout`` (SourceUnavailable otherwise)."""
        with answered(self.client, path):
            return request(path).get(timeout=self.timeout)


def held_elsewhere(locks: Locks, journal: str, mine: set[Any], wanted: Sequence[str]) -> Mark | None:  # fmt: skip
    """The mark of a run open in a journal other than ``journal`` that holds one of the
    locks ``wanted``, if any. A mark of ``journal``'s whose key is not in ``mine`` (its
    runs open, and this one) was left by an ending that could not remove it: removed."""
    for found in locks.marks():
        if found.journal == journal:
            if found.key not in mine:
                locks.unmark(found.key)
        elif set(found.locks) & set(wanted):
            return found
    return None


def leave_mark(locks: Locks, left: Mark) -> None:
    """A run's mark, before its first step; HostsBusy (nothing changed) if it cannot be."""
    try:
        locks.mark(left)
    except Exception as exc:
        raise HostsBusy(f"the run's mark cannot be left beside the locks ({exc}): nothing was changed") from exc  # fmt: skip


def unmark_run(locks: Locks, params: dict[str, Any]) -> None:
    """Remove a closed run's mark (``params["mark"]``); one that cannot be is removed by the
    next run journaled in the same journal, and until then holds its hosts against runs
    journaled in others."""
    if "mark" not in params:
        return
    try:
        locks.unmark(str(params["mark"]))
    except Exception as exc:  # noqa: BLE001 - the run is closed either way
        log.warning("the mark of a closed run was not removed (%s): the next run removes it", exc)


def _reconnected(client: Any, deadline: float) -> None:
    """Until ``client`` is connected again, or ``deadline`` (monotonic) has passed."""
    while not client.connected and time.monotonic() < deadline:
        time.sleep(0.05)


def _held_while_alive() -> None:
    """File locks: held until the process ends, nothing to check."""


def _what(lock: str) -> str:
    return "the config" if lock == CONFIG else f"host {lock}"


def _safe(host: str) -> str:
    """A host name as a file or znode name."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in host)


def locks_for(source: Any) -> Locks:
    """Host locks that every process using ``source`` sees: kazoo locks beside a ZooKeeper
    source's documents, file locks beside a directory's."""
    from .file_source import FileSource
    from .zookeeper_source import ZooKeeperSource

    if isinstance(source, ZooKeeperSource):
        return ZooKeeperLocks(source.client, source.root)
    if isinstance(source, FileSource):
        return FileLocks(source.root / "locks")
    raise TypeError(f"no locks for a {type(source).__name__}")
