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
data watch, read again at each reconnection, files by polling their change
time (ten times a second).

Each following process ``report``s the versions it has in force, and again every
``HEARTBEAT_SECONDS``, and ``followers()`` lists those that reported within their
lease (``LEASE_SECONDS``): an operation that must know that no process still acts
on an older map (a split's read-only window, a Redis move) waits on them. A process
that has not reached its source for a lease stops writing to Redis by itself
(``ConfigFollower.lease``), so one cut off from ZooKeeper is waited on until its
lease is over, never forgotten while it may still write there. Its MySQL writes go
on by its last map: an operation that moves a shard's master does not count on them
stopping, it fences the old master in MySQL itself (``fence``). In ZooKeeper a
report is a node (not ephemeral: an expired session must not drop a process that
still writes) aged by the server's time of its last write; in a directory, a file
aged by its change time, ignored at once if its pid is gone (one machine).
"""

from __future__ import annotations

from pathlib import Path

from .config_source import ConfigError, ConfigSource
from .file_source import FileSource
from .zookeeper_source import ZooKeeperSource


def open_source(spec: str | Path) -> ConfigSource:
    """The source ``PINBOARD_TOPOLOGY`` names: ``zk://hosts/root`` or a path."""
    text = str(spec)
    if text.startswith("zk://"):
        hosts, _, root = text.removeprefix("zk://").partition("/")
        if not hosts:
            raise ConfigError(f"{text}: expected zk://host:port[,host:port...]/root")
        return ZooKeeperSource(hosts, root or "pinboard")
    return FileSource(text)
