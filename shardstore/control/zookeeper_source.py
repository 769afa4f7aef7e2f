"""Config documents in ZooKeeper, through kazoo: each document under ``/root/<name>``, each
version under ``/root/history/<name>/<version>``, written in one transaction."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

from . import documents
from .config_source import (
    ConfigError,
    NotPublished,
    Revision,
    SourceUnavailable,
    VersionConflict,
    Watcher,
    check_reason,
    found_revision,
    next_version,
    now,
    process_node_name,
    within_lease,
)

#: A report older than this is a process that died without withdrawing: deleted.
FORGOTTEN_SECONDS = 3600.0


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
            document = json.loads(data)
            try:
                return self.revision(name, int(document["version"]))
            except NotPublished:  # written by hand, not published: no history entry
                return Revision(name, int(document["version"]), document, "", "", "")

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

        check_reason(author, reason)
        path = self.path(name)
        with self._errors():
            try:
                data, stat = self.client.get(path)
                found = json.loads(data)
                version, node_version = int(found["version"]), stat.version
            except NoNodeError:
                found, version, node_version = None, 0, None
            new = next_version(name, document, version, expect_version)
            revision = Revision(name, new["version"], new, author, now(), reason)
            self.client.ensure_path(self._history_path(name))
            transaction = self.client.transaction()
            encoded = json.dumps(new, sort_keys=True).encode()
            if node_version is None:
                transaction.create(path, encoded)
            else:
                transaction.set_data(path, encoded, version=node_version)
            if found is not None and not self.client.exists(self._history_path(name, version)):
                transaction.create(  # written by hand: kept as the first entry of the history
                    self._history_path(name, version),
                    json.dumps(found_revision(name, found).as_json(), sort_keys=True).encode(),
                )
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

        path = f"{self.root}/processes/{process_node_name(process)}"
        data = json.dumps(dict(versions), sort_keys=True).encode()
        with self._errors():
            try:
                self.client.set(path, data)
            except NoNodeError:  # the first report
                with contextlib.suppress(NodeExistsError):
                    self.client.create(path, data, makepath=True)

    def withdraw(self, process: str) -> None:
        from kazoo.exceptions import NoNodeError

        with self._errors(), contextlib.suppress(NoNodeError):
            self.client.delete(f"{self.root}/processes/{process_node_name(process)}")

    def followers(self) -> dict[str, dict[str, int]]:
        from kazoo.exceptions import NoNodeError

        found = {}
        with self._errors():
            try:
                children = self.client.get_children(f"{self.root}/processes")
            except NoNodeError:
                return {}
            for child in children:
                path = f"{self.root}/processes/{child}"
                try:
                    data, stat = self.client.get(path)
                except NoNodeError:
                    continue  # its process has just gone
                age = time.time() - stat.mtime / 1000
                if within_lease(age):
                    found[child] = {str(k): int(v) for k, v in json.loads(data).items()}
                elif age > FORGOTTEN_SECONDS:  # a process that died without withdrawing
                    with contextlib.suppress(NoNodeError):
                        self.client.delete(path, version=stat.version)
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
