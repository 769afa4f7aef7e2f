"""Config documents as JSON files in a directory (one machine): the embedded default's
source, and the local cluster's before ZooKeeper."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from . import documents
from .config_source import (
    ConfigError,
    NotPublished,
    Revision,
    Watcher,
    check_reason,
    found_revision,
    next_version,
    now,
    process_node_name,
    within_lease,
    write_private,
)

#: How often a file source looks for a changed document.
POLL_SECONDS = 0.1


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
        check_reason(author, reason)
        with self._publish_lock():
            current = self._read(name)
            version = int(current.get("version", 0)) if current else 0
            new = next_version(name, document, version, expect_version)
            revision = Revision(name, new["version"], new, author, now(), reason)
            history = self._history_dir(name)
            history.mkdir(parents=True, exist_ok=True)
            found = history / f"{version:010d}.json"
            if current is not None and not found.exists():  # written by hand: kept first
                _write_atomically(found, found_revision(name, current).as_json())
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
        _write_atomically(folder / f"{process_node_name(process)}.json", entry)

    def withdraw(self, process: str) -> None:
        (self.root / "processes" / f"{process_node_name(process)}.json").unlink(missing_ok=True)

    def followers(self) -> dict[str, dict[str, int]]:
        found = {}
        for path in (self.root / "processes").glob("*.json"):
            try:
                entry = json.loads(path.read_text())
                age = time.time() - path.stat().st_mtime
                pid = int(entry["pid"])
                versions = {str(k): int(v) for k, v in entry["versions"].items()}
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue  # half-written or foreign: not a follower
            if not _alive(pid):
                path.unlink(missing_ok=True)
            elif within_lease(age):
                found[path.stem] = versions
        return found

    def _record_path(self, kind: str, key: str) -> Path:
        return self.root / "records" / process_node_name(kind) / f"{process_node_name(key)}.json"

    def record(self, kind: str, key: str, data: Mapping[str, Any]) -> None:
        path = self._record_path(kind, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        with open(tmp, "w") as file:  # on disk before it replaces the last one
            file.write(json.dumps(dict(data), sort_keys=True) + "\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)

    def recorded(self, kind: str, key: str) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = json.loads(self._record_path(kind, key).read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise ConfigError(f"record {kind}/{key}: {exc}") from None
        return data

    def close(self) -> None:
        self._closed.set()
        for thread in self._watches:
            thread.join(timeout=2)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_atomically(path: Path, data: Mapping[str, Any]) -> None:
    write_private(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
