"""A process following the config documents: live changes, a local copy, ZooKeeper outages.

Runs on a ZooKeeper of its own, which the test halts and restarts.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from shardstore import ShardReadOnly, Store, Topology, init_shards
from shardstore.control import config_source
from shardstore.control import follower as follower_module
from shardstore.control.config_source import Revision
from shardstore.control.file_source import FileSource
from shardstore.control.follower import ConfigFollower
from shardstore.control.publish import followed_step
from shardstore.control.sources import open_source
from shardstore.exceptions import WritesInFlight
from tests.config_documents import eventually, shard_map, sqlite_shard_map

from .catalog import CATALOG


def follower(spec: str, mirror: Path, seen: list[Revision] | None = None) -> ConfigFollower:
    return ConfigFollower(
        lambda: open_source(spec),
        mirror,
        on_change=(seen.append if seen is not None else None),
    )


def test_changes_arrive_and_are_mirrored(tmp_path: Path) -> None:
    source = FileSource(tmp_path / "config")
    source.publish("shards", shard_map(1), author="ops", reason="first")
    seen: list[Revision] = []
    process = follower(str(tmp_path / "config"), tmp_path / "mirror", seen)
    status = process.start()
    assert status.versions == {"shards": 1} and status.connected
    source.publish("shards", shard_map(2), author="ops", reason="second")
    assert eventually(lambda: [r.version for r in seen] == [2], 5)
    assert process.current("shards").version == 2  # type: ignore[union-attr]
    assert '"version": 2' in (tmp_path / "mirror" / "shards.json").read_text()
    process.close()


def test_a_swap_with_writes_in_flight_is_not_reported(tmp_path: Path) -> None:
    """An operation waits for every process to report the new map: one whose swap could not
    drain its old writes does not report it, so the operation stops instead of going on."""
    source = FileSource(tmp_path / "config")
    source.publish("shards", shard_map(1), author="ops", reason="first")

    def undrained(revision: Revision) -> None:
        raise WritesInFlight(f"shard map v{revision.version}: writes under the old map in flight")

    process = ConfigFollower(
        lambda: open_source(str(tmp_path / "config")),
        tmp_path / "m",
        on_change=undrained,
        process="p",
    )
    process.start()
    source.publish("shards", shard_map(2), author="ops", reason="second")
    assert eventually(lambda: process.current("shards").version == 2, 5)  # type: ignore[union-attr]
    time.sleep(0.3)
    assert source.followers() == {"p": {"shards": 1}}
    process.close()


def test_a_process_cut_off_from_zookeeper_past_its_lease_stops_writing(
    private_zookeeper: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its reports stop; it refuses writes once its lease is over, and reads go on by its
    last map; the operator's wait counts it until then, and not after (it cannot write)."""
    monkeypatch.setattr(follower_module, "LEASE_SECONDS", 1.5)
    monkeypatch.setattr(config_source, "LEASE_SECONDS", 1.5)
    monkeypatch.setattr(config_source, "LEASE_MARGIN", 0.5)
    spec = f"zk://{private_zookeeper.address}/lease"
    operator = open_source(spec)
    operator.publish("shards", shard_map(1), author="ops", reason="first")
    process = ConfigFollower(lambda: open_source(spec), tmp_path / "m", process="web-1")
    process.start()
    store = Store(Topology.from_json(sqlite_shard_map(tmp_path / "shards")), catalog=CATALOG)
    init_shards(store)
    store.refuse_writes_when(process.lease)
    note = store.objects("note").create(0, {"n": 0})
    assert process.lease() is None and "web-1" in operator.followers()
    operator.close()

    private_zookeeper.halt()
    assert eventually(lambda: process.lease() is not None, 10)
    assert "has not answered for" in (process.lease() or "")
    with pytest.raises(ShardReadOnly, match="lease"):
        store.objects("note").create(0, {"n": 1})
    assert store.objects("note").get(note) == {"n": 0, "id": note}  # reads go on

    private_zookeeper.restart()
    assert eventually(lambda: process.lease() is None, 30)  # it reached ZooKeeper again
    operator = open_source(spec)
    assert "web-1" in operator.followers()
    process.close()
    assert "web-1" not in operator.followers()  # withdrawn at its close
    operator.report("gone-silent", {"shards": 1})  # reported once, then nothing
    assert "gone-silent" in operator.followers()
    assert eventually(lambda: "gone-silent" not in operator.followers(), 10)
    operator.close()
    store.close()


def test_the_local_copy_and_the_file_source_are_readable_by_their_user_alone(
    tmp_path: Path,
) -> None:
    previous = os.umask(0o022)  # what a shell usually has: new files readable by all
    try:
        source = FileSource(tmp_path / "config")
        source.publish("shards", shard_map(1), author="ops", reason="first")
        process = follower(str(tmp_path / "config"), tmp_path / "mirror")
        process.start()
        process.close()
    finally:
        os.umask(previous)
    written = [tmp_path / "mirror" / "shards.json", *(tmp_path / "config").rglob("*.json")]
    assert len(written) >= 3  # the copy, the document and its history entry
    assert {oct(stat.S_IMODE(path.stat().st_mode)) for path in written} == {"0o600"}
    assert stat.S_IMODE((tmp_path / "mirror").stat().st_mode) == 0o700


def test_zookeeper_outage_keeps_serving_and_recovers(
    private_zookeeper: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spec = f"zk://{private_zookeeper.address}/outage"
    publisher = open_source(spec)
    publisher.publish("shards", shard_map(1), author="ops", reason="first")
    publisher.close()
    seen: list[Revision] = []
    running = follower(spec, tmp_path / "mirror", seen)
    assert running.start().connected

    caplog.set_level(logging.WARNING, logger="shardstore.control.follower")
    private_zookeeper.halt()
    assert eventually(lambda: not running.status().connected, 15)
    assert running.current("shards").version == 1  # type: ignore[union-attr]
    lost = [r for r in caplog.records if "unreachable" in r.getMessage()]
    assert len(lost) == 1  # logged once

    # A process that boots while ZooKeeper is down starts from the local copy.
    booted = follower(spec, tmp_path / "mirror")
    status = booted.start()
    assert status.from_mirror == ("shards",) and status.versions == {"shards": 1}
    assert not status.connected

    private_zookeeper.restart()
    assert eventually(lambda: running.status().connected and booted.status().connected, 30)
    publisher = open_source(spec)
    publisher.publish("shards", shard_map(2), author="ops", reason="after the outage")
    publisher.close()
    for process in (running, booted):
        assert eventually(lambda p=process: p.current("shards").version == 2, 10)  # type: ignore[misc]
    assert [r.version for r in seen] == [2]
    running.close()
    booted.close()


@pytest.mark.parametrize("where", ["files", "zookeeper"])
def test_followers_report_the_versions_they_have_swapped_in(
    where: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if where == "files":
        spec = str(tmp_path / "config")
    else:
        spec = f"zk://{request.getfixturevalue('private_zookeeper').address}/followers"
    publisher = open_source(spec)
    publisher.publish("shards", shard_map(1), author="ops", reason="first")
    swapped = []

    def slow_swap(revision: Revision) -> None:
        # Still on v1 while the swap runs: a report may come only after it.
        assert publisher.followers()["slow"] == {"shards": 1}
        time.sleep(0.3)
        swapped.append(revision.version)

    slow = ConfigFollower(
        lambda: open_source(spec), tmp_path / "m1", on_change=slow_swap, process="slow"
    )
    other = ConfigFollower(lambda: open_source(spec), tmp_path / "m2", process="other")
    slow.start(), other.start()
    assert publisher.followers() == {"slow": {"shards": 1}, "other": {"shards": 1}}

    publisher.publish("shards", shard_map(2), author="ops", reason="second")
    wait = followed_step(publisher, "shards", 2, timeout=10)
    assert wait.name == "wait until every process follows shard map v2"
    done = re.fullmatch(
        r"2 processes follow shard map v2, the last \(slow\) after (\d+\.\d\d)s", wait.run()
    )
    assert done is not None and float(done[1]) >= 0.25  # the step names whom it waited on
    assert swapped == [2]

    other.close()  # a process that has gone is no longer waited for
    assert eventually(
        lambda: set(publisher.followers()) == {"slow"}, 30 if where == "zookeeper" else 5
    )
    publisher.publish("shards", shard_map(1), author="ops", reason="third")
    slow.close()
    assert eventually(lambda: publisher.followers() == {}, 30)
    publisher.close()
