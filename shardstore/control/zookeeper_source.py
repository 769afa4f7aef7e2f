"""Config documents in ZooKeeper, through kazoo: each document under ``/root/<name>``, each
version under ``/root/history/<name>/<version>``, written in one transaction."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator, Mapping
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
    the document node's version, sets it and creates the history node.

    Every request waits at most ``timeout`` seconds, and none is sent while the connection
    is down: kazoo would hold it until ZooKeeper answers again, however long that takes,
    and a process cut off from ZooKeeper could then neither report, nor close, nor exit."""

    def __init__(self, hosts: str, root: str, *, timeout: float = 5.0) -> None:
        from kazoo.client import KazooClient
        from kazoo.handlers.threading import KazooTimeoutError

        self.root = "/" + root.strip("/")
        self.description = f"zk://{hosts}{self.root}"
        self.timeout = timeout
        self.client = KazooClient(hosts=hosts, timeout=timeout)
        self._watches: list[Callable[[], None]] = []
        self.client.add_listener(self._reconnected)
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
                data, _ = self._wait(self.client.get_async(self.path(name)))
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
                data, _ = self._wait(self.client.get_async(self._history_path(name, version)))
            except NoNodeError:
                raise NotPublished(f"{name}: version {version} was never published") from None
        return Revision.from_json(json.loads(data))

    def history(self, name: str) -> list[Revision]:
        from kazoo.exceptions import NoNodeError

        with self._errors():
            try:
                children = self._wait(self.client.get_children_async(self._history_path(name)))
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
                data, stat = self._wait(self.client.get_async(path))
                found = json.loads(data)
                version, node_version = int(found["version"]), stat.version
            except NoNodeError:
                found, version, node_version = None, 0, None
            new = next_version(name, document, version, expect_version)
            revision = Revision(name, new["version"], new, author, now(), reason)
            self._wait(self.client.ensure_path_async(self._history_path(name)))
            transaction = self.client.transaction()
            encoded = json.dumps(new, sort_keys=True).encode()
            if node_version is None:
                transaction.create(path, encoded)
            else:
                transaction.set_data(path, encoded, version=node_version)
            old = self._history_path(name, version)
            if found is not None and not self._wait(self.client.exists_async(old)):
                transaction.create(  # written by hand: kept as the first entry of the history
                    old,
                    json.dumps(found_revision(name, found).as_json(), sort_keys=True).encode(),
                )
            transaction.create(
                self._history_path(name, revision.version),
                json.dumps(revision.as_json(), sort_keys=True).encode(),
            )
            results = self._wait(transaction.commit_async())
        if any(isinstance(result, Exception) for result in results):
            raise VersionConflict(
                f"{name}: another publish of version {revision.version} won; reload and retry"
            )
        return revision

    def watch(self, name: str, callback: Watcher) -> None:
        """Call ``callback`` with the document's version now, at each change, and each time
        the connection comes back (a change made while it was down fires no event).

        Not kazoo's DataWatch: on a lost connection it reads again at once, retrying
        without end in kazoo's callback thread, which a client's stop and the
        interpreter's exit both wait for."""
        from kazoo.exceptions import NoNodeError
        from kazoo.protocol.states import EventType

        path = self.path(name)

        def read(event: Any = None) -> None:
            if event is not None and event.type == EventType.NONE:
                return  # the connection was lost: _reconnected reads again
            with contextlib.suppress(ConfigError):
                try:
                    with self._errors():
                        data, _ = self._wait(self.client.get_async(path, watch=read))
                except NoNodeError:  # not published yet: watch for its creation
                    with self._errors():
                        self._wait(self.client.exists_async(path, watch=read))
                    return
                callback(self.revision(name, int(json.loads(data)["version"])))

        self._watches.append(read)
        read()

    def _reconnected(self, state: str) -> None:
        from kazoo.client import KazooState
        from kazoo.protocol.states import Callback

        if state == KazooState.CONNECTED:
            # In kazoo's callback thread, one after another with the changes it reports, so
            # a watcher never sees two versions at once; not here, in its connection
            # thread, which is the one that answers the reads.
            for read in list(self._watches):
                self.client.handler.dispatch_callback(Callback("watch", read, ()))

    def report(self, process: str, versions: Mapping[str, int]) -> None:
        from kazoo.exceptions import NodeExistsError, NoNodeError

        path = f"{self.root}/processes/{process_node_name(process)}"
        data = json.dumps(dict(versions), sort_keys=True).encode()
        with self._errors():
            try:
                self._wait(self.client.set_async(path, data))
            except NoNodeError:  # the first report
                with contextlib.suppress(NodeExistsError):
                    self._wait(self.client.create_async(path, data, makepath=True))

    def withdraw(self, process: str) -> None:
        from kazoo.exceptions import NoNodeError

        with self._errors(), contextlib.suppress(NoNodeError):
            self._wait(
                self.client.delete_async(f"{self.root}/processes/{process_node_name(process)}")
            )

    def followers(self) -> dict[str, dict[str, int]]:
        from kazoo.exceptions import NoNodeError

        found = {}
        with self._errors():
            try:
                children = self._wait(self.client.get_children_async(f"{self.root}/processes"))
            except NoNodeError:
                return {}
            for child in children:
                path = f"{self.root}/processes/{child}"
                try:
                    data, stat = self._wait(self.client.get_async(path))
                except NoNodeError:
                    continue  # its process has just gone
                age = time.time() - stat.mtime / 1000
                if within_lease(age):
                    found[child] = {str(k): int(v) for k, v in json.loads(data).items()}
                elif age > FORGOTTEN_SECONDS:  # a process that died without withdrawing
                    with contextlib.suppress(NoNodeError):
                        self._wait(self.client.delete_async(path, version=stat.version))
        return found

    def _record_path(self, kind: str, key: str) -> str:
        return f"{self.root}/records/{process_node_name(kind)}/{process_node_name(key)}"

    def record(self, kind: str, key: str, data: Mapping[str, Any]) -> None:
        from kazoo.exceptions import NodeExistsError, NoNodeError

        path, encoded = self._record_path(kind, key), json.dumps(dict(data), sort_keys=True)
        with self._errors():
            try:
                self._wait(self.client.set_async(path, encoded.encode()))
            except NoNodeError:  # the first record of its key
                with contextlib.suppress(NodeExistsError):
                    self._wait(self.client.create_async(path, encoded.encode(), makepath=True))

    def recorded(self, kind: str, key: str) -> dict[str, Any] | None:
        from kazoo.exceptions import NoNodeError

        with self._errors():
            try:
                data, _ = self._wait(self.client.get_async(self._record_path(kind, key)))
            except NoNodeError:
                return None
        found: dict[str, Any] = json.loads(data)
        return found

    def _errors(self) -> contextlib.AbstractContextManager[None]:
        return answered(self.client, self.description)

    def _wait(self, request: Any) -> Any:
        """A request's answer, or KazooTimeoutError after ``timeout`` seconds."""
        return request.get(timeout=self.timeout)

    def close(self) -> None:
        self._watches.clear()
        self.client.stop()
        self.client.close()


@contextlib.contextmanager
def answered(client: Any, what: str) -> Iterator[None]:
    """Requests to ZooKeeper about ``what``, SourceUnavailable if one cannot be answered:
    none is sent while the connection is down (kazoo would hold it until the connection is
    back), and a lost connection or an answer past its timeout raises it too."""
    from kazoo.exceptions import ConnectionClosedError, ConnectionLoss, SessionExpiredError
    from kazoo.handlers.threading import KazooTimeoutError

    if not client.connected:
        raise SourceUnavailable(f"ZooKeeper at {what} is unreachable")
    try:
        yield
    except (ConnectionLoss, ConnectionClosedError, SessionExpiredError, KazooTimeoutError):
        raise SourceUnavailable(f"ZooKeeper at {what} is unreachable") from None
