"""Config sources, one contract over a directory of files and over a real ZooKeeper:
versions with history, compare-and-set publishing, validation before anything is
written, and watches that see every new version."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from shardstore import InvalidTopology, Topology
from shardstore.control import documents
from shardstore.control.config_source import (
    ConfigError,
    ConfigSource,
    NotPublished,
    Revision,
    VersionConflict,
)
from shardstore.control.file_source import FileSource
from shardstore.control.publish import plan_rollback
from shardstore.control.zookeeper_source import ZooKeeperSource
from tests.config_documents import shard_map

from .conftest import CACHE_POOLS


def publish(source: ConfigSource, document: dict[str, Any], **options: Any) -> Revision:
    return source.publish("shards", document, author="ops", reason="test", **options)


def test_nothing_published(source: ConfigSource) -> None:
    with pytest.raises(NotPublished):
        source.current("shards")
    assert source.history("shards") == []


def test_publish_numbers_versions_and_keeps_history(source: ConfigSource) -> None:
    first = source.publish("shards", shard_map(1), author="ada", reason="first map")
    second = source.publish(
        "shards", shard_map(2), author="bob", reason="split db1", expect_version=1
    )
    assert (first.version, second.version) == (1, 2)
    current = source.current("shards")
    assert current == second and current.document["version"] == 2
    assert Topology.from_json(current.document).master_of(15) == "db2"
    assert [(r.version, r.author, r.reason) for r in source.history("shards")] == [
        (2, "bob", "split db1"),
        (1, "ada", "first map"),
    ]
    assert source.revision("shards", 1).document == {**shard_map(1), "version": 1}
    assert second.published_at >= first.published_at
    with pytest.raises(NotPublished):
        source.revision("shards", 3)


def test_publishing_against_an_old_version_is_a_conflict(source: ConfigSource) -> None:
    publish(source, shard_map(1))
    publish(source, shard_map(2), expect_version=1)
    with pytest.raises(VersionConflict, match="version 2 is current, not 1"):
        publish(source, shard_map(1), expect_version=1)
    assert source.current("shards").version == 2


def test_of_concurrent_publishes_exactly_one_wins(source: ConfigSource) -> None:
    publish(source, shard_map(1))
    barrier = threading.Barrier(4)
    outcomes: list[str] = []

    def operator(n: int) -> None:
        barrier.wait()
        try:
            publish(source, shard_map(2), expect_version=1)
            outcomes.append("won")
        except VersionConflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=operator, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict"] * 3 + ["won"]
    assert [r.version for r in source.history("shards")] == [2, 1]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda d: d["ranges"].pop(), "in no range"),  # a gap at the end
        (lambda d: d["ranges"][0].update(master="db9"), "db9"),  # a host that does not exist
        (lambda d: d.update(open=[[0, 99]]), "open"),  # open beyond the shards
        (lambda d: d.update(hosts="db1"), "hosts"),
    ],
)
def test_an_invalid_document_is_refused_with_its_reason(
    source: ConfigSource, change: Callable[[dict[str, Any]], Any], reason: str
) -> None:
    publish(source, shard_map(2))
    bad = shard_map(2)
    change(bad)
    with pytest.raises(InvalidTopology, match=reason):
        publish(source, bad)
    assert source.current("shards").version == 1 and len(source.history("shards")) == 1


def test_a_shard_map_with_a_password_in_an_address_is_refused_without_echoing_it(
    source: ConfigSource,
) -> None:
    publish(source, shard_map(2))
    for address in ("mysql://app:hunter2@10.0.0.2:3306", "mysql://app:@10.0.0.2:3306"):
        bad = shard_map(2)
        bad["hosts"]["db2"] = address
        with pytest.raises(InvalidTopology, match="host db2: the address holds a password") as err:
            publish(source, bad)
        assert "hunter2" not in str(err.value)
    with_user = shard_map(2)
    with_user["hosts"]["db2"] = "mysql://app@10.0.0.2:3306"  # a user alone reveals nothing
    assert publish(source, with_user).version == 2


def test_masked_hides_the_password_of_every_address_in_a_text_or_a_document() -> None:
    assert (
        documents.masked("mysql://app:s3:cr%40t@10.0.0.1:3306") == "mysql://app:****@10.0.0.1:3306"
    )
    assert documents.masked("mysql://app@10.0.0.1:3306/x") == "mysql://app@10.0.0.1:3306/x"
    assert documents.masked("a: redis://:pw@h:6379/0, b: mysql://u:p@h") == (
        "a: redis://:****@h:6379/0, b: mysql://u:****@h"
    )
    document = {"hosts": {"a": "mysql://u:p@h:1"}, "ranges": [["mysql://u:p@h", 3]], "n": 4}
    assert documents.masked(document) == {
        "hosts": {"a": "mysql://u:****@h:1"},
        "ranges": [["mysql://u:****@h", 3]],
        "n": 4,
    }


def test_redis_and_cache_documents(source: ConfigSource) -> None:
    redis = {
        "version": 0,
        "instances": {"r1": "redis://10.0.1.1:6379/0", "r2": "redis://10.0.1.2:6379/0"},
        "ranges": [
            {"range": [0, 4095], "instance": "r1"},
            {"range": [4096, 8191], "instance": "r2"},
        ],
    }
    assert source.publish("redis", redis, author="ops", reason="two").version == 1
    redis["ranges"][1]["range"] = [4097, 8191]
    with pytest.raises(InvalidTopology, match="4096"):
        source.publish("redis", redis, author="ops", reason="gap")
    pools = {name: ["10.0.2.1:11211"] for name in CACHE_POOLS}
    assert source.publish("caches", {"version": 0, "pools": pools}, author="o", reason="r")
    with pytest.raises(InvalidTopology, match="pool notes has no server"):
        source.publish("caches", {"version": 0, "pools": {**pools, "notes": []}}, author="o", reason="r")  # fmt: skip
    with pytest.raises(InvalidTopology, match="no config document named"):
        source.publish("nonsense", {"version": 0}, author="o", reason="r")


def test_publishing_needs_an_author_and_a_reason(source: ConfigSource) -> None:
    with pytest.raises(ConfigError, match="reason"):
        source.publish("shards", shard_map(1), author="ops", reason=" ")
    with pytest.raises(NotPublished):
        source.current("shards")


def test_watch_sees_each_new_version(source: ConfigSource) -> None:
    publish(source, shard_map(1))
    seen: list[int] = []
    source.watch("shards", lambda revision: seen.append(revision.version))
    publish(source, shard_map(2))
    publish(source, shard_map(4))
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (not seen or seen[-1] != 3):
        time.sleep(0.01)
    assert seen and seen[-1] == 3
    assert seen == sorted(seen)


def test_a_file_path_is_the_shard_map_with_the_rest_beside_it(tmp_path: Path) -> None:
    topology = tmp_path / "topology.json"
    source = FileSource(topology)
    source.publish("shards", shard_map(1), author="ops", reason="first")
    source.publish("redis", {**_one_redis(), "version": 0}, author="ops", reason="first")
    assert Topology.load(topology).version == 1  # the file a plain Store reads, as before
    assert (tmp_path / "redis.json").exists() and (tmp_path / "history" / "shards").is_dir()


def _one_redis() -> dict[str, Any]:
    return {"instances": {"r1": "redis://10.0.1.1:6379/0"}, "ranges": [{"range": [0, 8191], "instance": "r1"}]}  # fmt: skip


def test_zookeeper_down_is_a_clear_error(tmp_path: Path) -> None:
    from shardstore.control.config_source import SourceUnavailable

    with pytest.raises(SourceUnavailable, match="did not answer"):
        ZooKeeperSource("127.0.0.1:1", "nowhere", timeout=0.5)


KEYS = ["version", "range", "ranges", "instance", "instances", "pools", "hosts", "open",
        "master", "replicas", "replica", "slave", "shard_count", "lookup_shards", "out_of_service"]  # fmt: skip
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 9000) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=3), children, max_size=5)
    ),
    max_leaves=20,
)


@given(name=st.sampled_from(documents.NAMES), document=json_values)
@example(name="redis", document={"version": 1, "instances": {"a": "redis://h"}, "ranges": [5]})
@example(name="redis", document={"version": 1, "instances": {"a": "redis://h"}, "ranges": {"a": 1}})
@example(
    name="redis",
    document={
        "version": 1,
        "instances": {"a": "redis://h"},
        "ranges": [{"range": [1, 2, 3], "instance": "a"}],
    },
)
@example(name="shards", document={"version": 1, "hosts": {"a": "mysql://h"}, "ranges": [[0, 1]]})
@example(name="caches", document={"version": 1, "pools": {"accounts": [1]}})
@hypothesis_settings(max_examples=300)
def test_any_malformed_document_is_refused_with_a_reason(name: str, document: Any) -> None:
    """Whatever JSON an operator pastes, validation says why it is refused: no other error."""
    try:
        documents.validate(name, document)
    except InvalidTopology as exc:
        assert str(exc)


def _published_by_an_older_release(source: ConfigSource, document: dict[str, Any]) -> None:
    """``document`` as version 1 with its history entry, stored as an older release did."""
    entry = {"name": "shards", "version": 1, "author": "ops", "reason": "first map",
             "published_at": "2026-01-01T00:00:00+00:00", "document": document}  # fmt: skip
    if isinstance(source, FileSource):
        history = source.root / "history" / "shards"
        history.mkdir(parents=True)
        (history / f"{1:010d}.json").write_text(json.dumps(entry))
        source.path("shards").write_text(json.dumps(document))
    else:
        assert isinstance(source, ZooKeeperSource)
        history_node = f"{source.root}/history/shards/{1:010d}"
        source.client.create(history_node, json.dumps(entry).encode(), makepath=True)
        source.client.create(source.path("shards"), json.dumps(document).encode(), makepath=True)


def _stored(source: ConfigSource) -> str:
    """The shard map's text as the source keeps it."""
    if isinstance(source, FileSource):
        return source.path("shards").read_text()
    assert isinstance(source, ZooKeeperSource)
    data: bytes = source.client.get(source.path("shards"))[0]
    return data.decode()


def test_a_map_written_with_slave_reads_diffs_and_rolls_back_as_replicas(
    source: ConfigSource,
) -> None:
    old = {**shard_map(2), "version": 1}
    old["ranges"][0]["slave"] = "db2"
    _published_by_an_older_release(source, old)
    pair = {"range": [0, 7], "master": "db1", "replicas": ["db2"]}
    assert source.current("shards").document["ranges"][0] == pair
    assert source.history("shards")[0].document["ranges"][0] == pair
    publish(source, {**source.current("shards").document, "open": [[0, 7]]}, expect_version=1)
    assert '"slave"' not in _stored(source)
    assert json.loads(_stored(source))["ranges"][0]["replicas"] == ["db2"]
    rollback = plan_rollback(source, "shards", 1, author="ops", reason="reopen")
    assert "slave" not in rollback.params["diff"] and "replica" not in rollback.params["diff"]
    rollback.steps[0].run()
    assert '"slave"' not in _stored(source) and source.current("shards").document["ranges"][0] == pair  # fmt: skip
    changed = documents.diff(source.revision("shards", 1).document, source.current("shards").document)  # fmt: skip
    assert [line for line in changed.splitlines()[2:] if line[:1] in "+-"] == [
        '-  "version": 1',
        '+  "version": 3',
    ]


def test_a_range_naming_a_different_replica_under_each_key_is_not_published(
    source: ConfigSource,
) -> None:
    document = shard_map(2)
    document["hosts"]["db3"] = "mysql://10.0.0.3:3306"
    document["ranges"][0].update(replica="db2", slave="db3")
    with pytest.raises(InvalidTopology, match="replica 'db2' and slave 'db3' differ"):
        publish(source, document)
    with pytest.raises(NotPublished):
        source.current("shards")
