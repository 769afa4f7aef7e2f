"""Locks that keep two operations off one host, and off the config (``CONFIG``), at once:
all or nothing (``HostsBusy`` otherwise), held for a whole run, checked again before each
step (``LockCheck``: a ZooKeeper lock goes with its session)."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from collections.abc import Callable, Iterator, Sequence
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


class Locks(Protocol):
    def hold(
        self, hosts: Sequence[str], *, owner: str
    ) -> contextlib.AbstractContextManager[LockCheck]:
        """Hold every host's lock for the block, or raise HostsBusy at once."""
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

    def _check(self, acquired: list[Any]) -> None:
        """Each lock's node is still there, owned by this session (a session that expired
        took its nodes with it, and another operator may hold the lock now)."""
        session = self.client.client_id[0] if self.client.client_id else None
        for lock in acquired:
            try:
                stat = self._ask(self.client.exists_async, f"{lock.path}/{lock.node}")
            except SourceUnavailable as exc:
                raise LockLost(f"lock {lock.path} cannot be checked: {exc}") from None
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
