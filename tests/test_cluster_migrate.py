"""A local cluster made when its shard map carried the site's password: ``up`` publishes the
map again without it, and takes it out of ZooKeeper's history too."""

from __future__ import annotations

import io
import json

import pytest

from shardstore import Topology
from shardstore.control import documents
from shardstore.control.sources import open_source
from tests.config_documents import shard_map
from toolkit.cluster.migrate import drop_map_passwords
from toolkit.servers.zookeeper import ZooKeeperServer


def test_the_password_leaves_the_map_and_its_history(
    zookeeper_server: ZooKeeperServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = f"zk://{zookeeper_server.address}/test-cluster-migrate"
    source = open_source(spec)
    old = shard_map(2)
    old["hosts"] = {name: address.replace("://", "://pinboard:s3cret@") for name, address in old["hosts"].items()}  # fmt: skip
    with monkeypatch.context() as before:  # as maps were published before they were refused
        before.setitem(documents._VALIDATORS, documents.SHARDS, Topology.from_json)
        source.publish(documents.SHARDS, old, author="cluster", reason="the local cluster")
        source.publish(documents.SHARDS, {**old, "open": [[0, 7]]}, author="ops", reason="fewer")
    out = io.StringIO()
    drop_map_passwords(spec, out)
    drop_map_passwords(spec, out)  # once more: nothing left to do
    assert out.getvalue().count("published the shard map without") == 1
    history = source.history(documents.SHARDS)
    assert [revision.version for revision in history] == [3, 2, 1]
    assert [revision.author for revision in history] == ["cluster", "ops", "cluster"]
    assert "s3cret" not in json.dumps([revision.as_json() for revision in history])
    assert source.current(documents.SHARDS).document["hosts"] == shard_map(2)["hosts"]
    source.close()
