"""What ``up`` does once to a cluster made before a change of the project's own.

A shard map holds no password now (``shardstore.control.documents`` refuses one), but the
local cluster's map used to carry the site's. For such a cluster, ``up`` publishes the map
again without it and takes it out of every version in ZooKeeper's history as well: a
rollback would bring it back, and the history is what an operator reads.
"""

from __future__ import annotations

import json
import re
from typing import Any, TextIO

from shardstore.control import documents
from shardstore.control.sources import open_source
from shardstore.control.zookeeper_source import ZooKeeperSource

_USERINFO = re.compile(r"://[^@/]*@")


def _bare(document: dict[str, Any]) -> dict[str, Any]:
    hosts = {name: _USERINFO.sub("://", address) for name, address in document["hosts"].items()}
    return {**document, "hosts": hosts}


def drop_map_passwords(spec: str, out: TextIO) -> None:
    """The shard map in ``spec`` (and its history) without any address's login."""
    source = open_source(spec)
    try:
        current = source.current(documents.SHARDS)
        if _bare(current.document) != current.document:
            source.publish(
                documents.SHARDS,
                _bare(current.document),
                author="cluster",
                reason="no password in the shard map: the site logs in as PINBOARD_MYSQL_LOGIN",
                expect_version=current.version,
            )
            out.write("  published the shard map without the site's password\n")
        if not isinstance(source, ZooKeeperSource):
            return
        for revision in source.history(documents.SHARDS):
            if _bare(revision.document) != revision.document:
                entry = {**revision.as_json(), "document": _bare(revision.document)}
                path = source._history_path(documents.SHARDS, revision.version)
                source.client.set(path, json.dumps(entry, sort_keys=True).encode())
                out.write(
                    f"  shard map v{revision.version}: its password taken out of the history\n"
                )
    finally:
        source.close()
