"""Where the config documents live: a directory of JSON files, or ZooKeeper.

Both keep every published version with who published it, when and why, and
publish by compare-and-set on the version: of two operators publishing
against the same version, one wins and the other gets ``VersionConflict``.
A document is validated (``documents.validate``) before it is written, so an
invalid one never reaches a process.

``open_source(spec)`` reads ``PINBOARD_TOPOLOGY``'s two forms:

* a path: a directory holding ``shards.json``, ``redis.json``, ``caches.json``
  (or a file, which is then the shard map, the others beside it), with the
  history under ``history/`` beside them;
* ``zk://host:port[,host:port...]/root``: ZooKeeper, through kazoo: the
  document under ``/root/<name>``, each version under
  ``/root/history/<name>/<version>``, written in one transaction.

``watch(name, callback)`` calls back with each new revision: ZooKeeper by a
kazoo data watch, files by polling their change time (ten times a second).

Each following process ``report``s the versions it has in force, and
``followers()`` lists them: an operation that must know that no process still
acts on an older map (a split's read-only window) waits on it. In ZooKeeper a
report is an ephemeral node, gone with its process's session; in a directory,
a file named for the process, ignored once its pid is gone (one machine).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from ..exceptions import ShardStoreError
from . import documents

#: How often a file source looks for a changed document.
POLL_SECONDS = 0.1


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
        """The versions in force in each live process that reports to this source."""
        ...

    def withdraw(self, process: str) -> None:
        """``process`` follows no more (it is closing)."""
        ...

    def close(self) -> None: ...


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _next(
    name: str, document: Mapping[str, Any], current: int, expect: int | None
) -> dict[str, Any]:
    """The document to write as the version after ``current``, validated."""
    if expect is not None and expect != current:
        raise VersionConflict(
            f"{name}: version {current} is current, not {expect}; reload and publish again"
        )
    return documents.validate(name, {**document, "version": current + 1})


def _check_reason(author: str, reason: str) -> None:
    if not author.strip() or not reason.strip():
        raise ConfigError("publishing needs an author and a reason")


# -- files ----------------------------------------------------------------------


class FileSource:
    """Documents as JSON files in a directory; history in ``history/<name>/``.

    A publish holds an exclusive ``flock`` on ``.publish.lock``, writes the
    history entry, then replaces the document with ``os.replace`` (atomic: a
    reader sees the old file or the new one, never half of one).
    """

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if path.suffix == ".json" or path.is_file():
            self.root, self._files = path.parent, {documents.SHARDS: path.name}
        else:
            self.root, self._files = path, {}
        self.description = str(path)
        self._watches: list[threading.Thread] = []
        self._closed = threading.Event()

    def path(self, name: str) -> Path:
        documents.check_name(name)
        return self.root / self._files.get(name, f"{name}.json")

    def _history_dir(self, name: str) -> Path:
        return self.root / "history" / name

    def _read(self, name: str) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = json.loads(self.path(name).read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{name}: cannot read {self.path(name)}: {exc}") from None
        return data

    def current(self, name: str) -> Revision:
        document = self._read(name)
        if document is None:
            raise NotPublished(f"{name}: nothing published at {self.path(name)}")
        version = int(document.get("version", 0))
        try:
            meta = self.revision(name, version)
        except NotPublished:  # written by hand, not published: no history entry
            return Revision(name, version, document, "", "", "")
        return Revision(name, version, document, meta.author, meta.published_at, meta.reason)

    def revision(self, name: str, version: int) -> Revision:
        entry = self._history_dir(name) / f"{version:010d}.json"
        try:
            return Revision.from_json(json.loads(entry.read_text()))
        except FileNotFoundError:
            raise NotPublished(f"{name}: version {version} was never published") from None

    def history(self, name: str) -> list[Revision]:
        documents.check_name(name)
        entries = sorted(self._history_dir(name).glob("*.json"), reverse=True)
        return [Revision.from_json(json.loads(entry.read_text())) for entry in entries]

    def publish(
        self,
        name: str,
        document: Mapping[str, Any],
        *,
        author: str,
        reason: str,
        expect_version: int | None = None,
    ) -> Revision:
        _check_reason(author, reason)
        with self._publish_lock():
            current = self._read(name)
            version = int(current.get("version", 0)) if current else 0
            new = _next(name, document, version, expect_version)
            revision = Revision(name, new["version"], new, author, _now(), reason)
            history = self._history_dir(name)
            history.mkdir(parents=True, exist_ok=True)
            _write_atomically(history / f"{revision.version:010d}.json", revision.as_json())
            _write_atomically(self.path(name), new)
        return revision

    @contextlib.contextmanager
    def _publish_lock(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".publish.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def watch(self, name: str, callback: Watcher) -> None:
        path = self.path(name)

        def stamp() -> tuple[int, int, int] | None:
            try:
                st = path.stat()
            except FileNotFoundError:
                return None
            return (st.st_mtime_ns, st.st_ino, st.st_size)

        seen = stamp()  # now, not when the thread first runs: no change slips in between

        def poll() -> None:
            nonlocal seen
            while not self._closed.wait(POLL_SECONDS):
                now = stamp()
                if now == seen or now is None:
                    continue
                seen = now
                with contextlib.suppress(ConfigError, ValueError):  # a half-made manual edit
                    callback(self.current(name))

        thread = threading.Thread(target=poll, name=f"config-watch-{name}", daemon=True)
        thread.start()
        self._watches.append(thread)

    def report(self, process: str, versions: Mapping[str, int]) -> None:
        folder = self.root / "processes"
        folder.mkdir(parents=True, exist_ok=True)
        entry = {"pid": os.getpid(), "versions": dict(versions)}
        _write_atomically(folder / f"{_process_file(process)}.json", entry)

    def withdraw(self, process: str) -> None:
        (self.root / "processes" / f"{_process_file(process)}.json").unlink(missing_ok=True)

    def followers(self) -> dict[str, dict[str, int]]:
        found = {}
        for path in (self.root / "processes").glob("*.json"):
            try:
                entry = json.loads(path.read_text())
                pid = int(entry["pid"])
                versions = {str(k): int(v) for k, v in entry["versions"].items()}
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue  # half-written or foreign: not a follower
            if _alive(pid):
                found[path.stem] = versions
            else:
                path.unlink(missing_ok=True)
        return found

    def close(self) -> None:
        self._closed.set()
        for thread in self._watches:
            thread.join(timeout=2)


def _process_file(process: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in process)[:200]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_atomically(path: Path, data: Mapping[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


# -- ZooKeeper --------------------------------------------------------------------


class ZooKeeperSource:
    """Documents in ZooKeeper under one root: ``<root>/<name>`` and
    ``<root>/history/<name>/<version>``; a publish is one transaction that checks
    the document node's version, sets it and creates the history node."""

    def __init__(self, hosts: str, root: str, *, timeout: float = 5.0) -> None:
        from kazoo.client import KazooClient
        from kazoo.handlers.threading import KazooTimeoutError

        self.root = "/" + root.strip("/")
        self.description = f"zk://{hosts}{self.root}"
        self.client = KazooClient(hosts=hosts, timeout=timeout)
        try:
            self.client.start(timeout=timeout)
        except KazooTimeoutError:
            self.client.stop()
            self.client.close()
            raise SourceUnavailable(f"ZooKeeper at {hosts} did not answer") from None

    def path(self, name: str) -> str:
        return f"{self.root}/{documents.check_name(name)}"

    def _history_path(self, name: str, version: int | None = None) -> str:
        base = f"{self.root}/history/{documents.check_name(name)}"
        return base if version is None else f"{base}/{version:010d}"

    def current(self, name: str) -> Revision:
        from kazoo.exceptions import NoNodeError

        with self._errors():
            try:
                data, _ = self.client.get(self.path(name))
            except NoNodeError:
                raise NotPublished(f"{name}: nothing published at {self.path(name)}") from None
            return self.revision(name, int(json.loads(data)["version"]))

    def revision(self, name: str, version: int) -> Revision:
        from kazoo.exceptions import NoNodeError

        with self._errors():
            try:
                data, _ = self.client.get(self._history_path(name, version))
            except NoNodeError:
                raise NotPublished(f"{name}: version {version} was never published") from None
        return Revision.from_json(json.loads(data))

    def history(self, name: str) -> list[Revision]:
        from kazoo.exceptions import NoNodeError

        with self._errors():
            try:
                children = self.client.get_children(self._history_path(name))
            except NoNodeError:
                return []
            return [self.revision(name, int(child)) for child in sorted(children, reverse=True)]

    def publish(
        self,
        name: str,
        document: Mapping[str, Any],
        *,
        author: str,
        reason: str,
        expect_version: int | None = None,
    ) -> Revision:
        from kazoo.exceptions import NoNodeError

        _check_reason(author, reason)
        path = self.path(name)
        with self._errors():
            try:
                data, stat = self.client.get(path)
                version, node_version = int(json.loads(data)["version"]), stat.version
            except NoNodeError:
                version, node_version = 0, None
            new = _next(name, document, version, expect_version)
            revision = Revision(name, new["version"], new, author, _now(), reason)
            self.client.ensure_path(self._history_path(name))
            transaction = self.client.transaction()
            encoded = json.dumps(new, sort_keys=True).encode()
            if node_version is None:
                transaction.create(path, encoded)
            else:
                transaction.set_data(path, encoded, version=node_version)
            transaction.create(
                self._history_path(name, revision.version),
                json.dumps(revision.as_json(), sort_keys=True).encode(),
            )
            results = transaction.commit()
        if any(isinstance(result, Exception) for result in results):
            raise VersionConflict(
                f"{name}: another publish of version {revision.version} won; reload and retry"
            )
        return revision

    def watch(self, name: str, callback: Watcher) -> None:
        from kazoo.recipe.watchers import DataWatch

        def changed(data: bytes | None, stat: Any) -> None:
            if data is None:
                return
            version = int(json.loads(data)["version"])
            with contextlib.suppress(ConfigError):
                callback(self.revision(name, version))

        DataWatch(self.client, self.path(name), changed)

    def report(self, process: str, versions: Mapping[str, int]) -> None:
        from kazoo.exceptions import NodeExistsError, NoNodeError

        path = f"{self.root}/processes/{_process_file(process)}"
        data = json.dumps(dict(versions), sort_keys=True).encode()
        with self._errors():
            try:
                self.client.set(path, data)
            except NoNodeError:  # first report, or the session that owned it expired
                with contextlib.suppress(NodeExistsError):
                    self.client.create(path, data, ephemeral=True, makepath=True)

    def withdraw(self, process: str) -> None:
        from kazoo.exceptions import NoNodeError

        with self._errors(), contextlib.suppress(NoNodeError):
            self.client.delete(f"{self.root}/processes/{_process_file(process)}")

    def followers(self) -> dict[str, dict[str, int]]:
        from kazoo.exceptions import NoNodeError

        found = {}
        with self._errors():
            try:
                children = self.client.get_children(f"{self.root}/processes")
            except NoNodeError:
                return {}
            for child in children:
                try:
                    data, _ = self.client.get(f"{self.root}/processes/{child}")
                except NoNodeError:
                    continue  # its process has just gone
                found[child] = {str(k): int(v) for k, v in json.loads(data).items()}
        return found

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        from kazoo.exceptions import ConnectionClosedError, ConnectionLoss, SessionExpiredError
        from kazoo.handlers.threading import KazooTimeoutError

        try:
            yield
        except (ConnectionLoss, ConnectionClosedError, SessionExpiredError, KazooTimeoutError):
            raise SourceUnavailable(f"ZooKeeper at {self.description} is unreachable") from None

    def close(self) -> None:
        self.client.stop()
        self.client.close()


def open_source(spec: str | Path) -> ConfigSource:
    """The source ``PINBOARD_TOPOLOGY`` names: ``zk://hosts/root`` or a path."""
    text = str(spec)
    if text.startswith("zk://"):
        hosts, _, root = text.removeprefix("zk://").partition("/")
        if not hosts:
            raise ConfigError(f"{text}: expected zk://host:port[,host:port...]/root")
        return ZooKeeperSource(hosts, root or "pinboard")
    return FileSource(text)
