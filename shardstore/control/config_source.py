"""What a config source is: the ``ConfigSource`` protocol, a ``Revision`` of a document,
the errors a source raises, and the rules every source applies when it publishes
(compare-and-set on the version, validation, an author and a reason).

The sources themselves: ``file_source.FileSource`` and ``zookeeper_source.ZooKeeperSource``;
``sources.open_source`` opens the one a spec names.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from ..exceptions import ShardStoreError
from . import documents


class ConfigError(ShardStoreError):
    """A config source cannot do what was asked (see the subclasses)."""


class VersionConflict(ConfigError):
    """Publishing against a version that is no longer current: someone published first."""


class NotPublished(ConfigError, LookupError):
    """No version of the document (or not the one asked for) was ever published."""


class SourceUnavailable(ConfigError):
    """The config store (ZooKeeper) cannot be reached."""


@dataclass(frozen=True)
class Revision:
    """One published version of a document, and who published it, when and why."""

    name: str
    version: int
    document: dict[str, Any]
    author: str
    published_at: str  # ISO 8601, UTC
    reason: str

    def __post_init__(self) -> None:
        # A version an older release wrote reads as this release would write it, so that
        # operations, diffs and rollbacks see one form of every version.
        object.__setattr__(self, "document", documents.current_form(self.name, self.document))

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "author": self.author,
            "published_at": self.published_at,
            "reason": self.reason,
            "document": self.document,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Revision:
        return cls(
            data["name"],
            int(data["version"]),
            dict(data["document"]),
            str(data.get("author", "")),
            str(data.get("published_at", "")),
            str(data.get("reason", "")),
        )


Watcher = Callable[[Revision], None]


class ConfigSource(Protocol):
    """Versioned documents with history, compare-and-set publishing and change watches."""

    description: str

    def current(self, name: str) -> Revision:
        """The newest version; NotPublished if there is none."""
        ...

    def revision(self, name: str, version: int) -> Revision:
        """A past (or the current) version; NotPublished if it never was."""
        ...

    def history(self, name: str) -> list[Revision]:
        """Every published version, newest first."""
        ...

    def publish(
        self,
        name: str,
        document: Mapping[str, Any],
        *,
        author: str,
        reason: str,
        expect_version: int | None = None,
    ) -> Revision:
        """Validate and publish as the next version. With ``expect_version``, only if that
        is still the current version (0: nothing published yet); VersionConflict if not."""
        ...

    def watch(self, name: str, callback: Watcher) -> None:
        """Call ``callback`` with each newly published revision (from another thread)."""
        ...

    def report(self, process: str, versions: Mapping[str, int]) -> None:
        """Record the version of each document ``process`` has in force."""
        ...

    def followers(self) -> dict[str, dict[str, int]]:
        """The versions in force in each process that has reported to this source within
        its lease (``LEASE_SECONDS`` and ``LEASE_MARGIN``): those that may still write to
        Redis (a process past its lease writes MySQL alone, by its last map)."""
        ...

    def withdraw(self, process: str) -> None:
        """``process`` follows no more (it is closing)."""
        ...

    def record(self, kind: str, key: str, data: Mapping[str, Any]) -> None:
        """Keep ``data`` as the record ``key`` of ``kind``, in place of the one before (no
        version, no history; written durably): what the fleet probe records of each master
        (``acknowledged.py``)."""
        ...

    def recorded(self, kind: str, key: str) -> dict[str, Any] | None:
        """The record ``key`` of ``kind``; None if there is none."""
        ...

    def close(self) -> None: ...


#: A process that has not reached its config source for this long stops writing to Redis
#: (it goes on reading, and writing MySQL, by its last-known-good map): an operation that
#: waits for every process to follow a new map need not wait for one cut off from
#: ZooKeeper longer than that. (MySQL writes by an old map are fenced in MySQL itself.)
LEASE_SECONDS = 8.0
#: How often each process reports to its source, which renews its lease.
HEARTBEAT_SECONDS = 2.0
#: Leeway for the clocks of the source and the operator (a report's age is read off the
#: source's time of the write): a process counts as a follower this much past its lease.
LEASE_MARGIN = 2.0


def within_lease(age_seconds: float) -> bool:
    """Whether a process whose last report is this old may still write to Redis."""
    return age_seconds <= LEASE_SECONDS + LEASE_MARGIN


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def next_version(
    name: str, document: Mapping[str, Any], current: int, expect: int | None
) -> dict[str, Any]:
    """The document to write as the version after ``current``, validated."""
    if expect is not None and expect != current:
        raise VersionConflict(
            f"{name}: version {current} is current, not {expect}; reload and publish again"
        )
    return documents.validate(name, {**document, "version": current + 1})


#: The history entry of a document that was in place before anything was published
#: through a source (written by hand): it is kept at the first publish after it.
FOUND_AUTHOR = "(unknown)"
FOUND_REASON = "in place before the first publish (not published through the tool)"


def found_revision(name: str, document: Mapping[str, Any]) -> Revision:
    """A document found in place with no history entry for its version, as that entry: the
    first publish after it keeps it, so that ``topology diff`` and ``rollback`` reach it."""
    version = int(document.get("version", 0))
    return Revision(name, version, dict(document), FOUND_AUTHOR, now(), FOUND_REASON)


def check_reason(author: str, reason: str) -> None:
    if not author.strip() or not reason.strip():
        raise ConfigError("publishing needs an author and a reason")


def process_node_name(process: str) -> str:
    """A follower's name as a file or znode name: safe characters only, bounded."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in process)[:200]


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically, readable by this user alone (mode 0600 from
    the file's creation, whatever the umask: a document names every host)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()  # left by a process that died mid-write, perhaps with another mode
    descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with open(descriptor, "w") as file:
        file.write(text)
    os.replace(tmp, path)
