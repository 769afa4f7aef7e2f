"""A process following the config documents: live changes, a local copy, ZooKeeper outages.

Runs on a ZooKeeper of its own, which the test halts and restarts.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from shardstore import ShardMoving, Store, Topology
from shardstore.control import config_source
from shardstore.control import follower as follower_module
from shardstore.control.config_source import ConfigSource, Revision
from shardstore.control.file_source import FileSource
from shardstore.control.follower import ConfigFollower
from shardstore.control.publish import followed_step
from shardstore.control.sources import open_source
from shardstore.exceptions import WritesInFlight
from shardstore.redis_shards import RedisShards, RedisTopology, RedisWritesRefused
from tests.config_documents import eventually, shard_map

from .catalog import CATALOG
from .conftest import two_host_topology


@pytest.fixture
def closing() -> Iterator[ExitStack]:
    """Closes what a test opened, even when it fails: a ZooKeeper client left open after its
    server has gone retries a watch in kazoo's callback thread, which the exit waits on."""
    with ExitStack() as stack:
        yield stack


def follower(
    closing: ExitStack, spec: str, mirror: Path, seen: list[Revision] | None = None, **options: Any
) -> ConfigFollower:
    if seen is not None:
        options["on_change"] = seen.append
    process = ConfigFollower(lambda: open_source(spec), mirror, **options)
    closing.callback(process.close)
    return process


def opened(closing: ExitStack, spec: str) -> ConfigSource:
    source = open_source(spec)
    closing.callback(source.close)
    return source


def test_changes_arrive_and_are_mirrored(tmp_path: Path, closing: ExitStack) -> None:
    source = FileSource(tmp_path / "config")
    source.publish("shards", shard_map(1), author="ops", reason="first")
    seen: list[Revision] = []
    process = follower(closing, str(tmp_path / "config"), tmp_path / "mirror", seen)
    status = process.start()
    assert status.versions == {"shards": 1} and status.connected
    source.publish("shards", shard_map(2), author="ops", reason="second")
    assert eventually(lambda: [r.version for r in seen] == [2], 5)
    assert process.current("shards").version == 2  # type: ignore[union-attr]
    assert '"version": 2' in (tmp_path / "mirror" / "shards.json").read_text()
    process.close()


def test_a_swap_with_writes_in_flight_is_not_reported(tmp_path: Path, closing: ExitStack) -> None:
    """An operation waits for every process to report the new map: one whose swap could not
    drain its old writes does not report it, so the operation stops instead of going on."""
    source = FileSource(tmp_path / "config")
    source.publish("shards", shard_map(1), author="ops", reason="first")

    def undrained(revision: Revision) -> None:
        raise WritesInFlight(f"shard map v{revision.version}: writes under the old map in flight")

    process = follower(
        closing, str(tmp_path / "config"), tmp_path / "m", on_change=undrained, process="p"
    )
    process.start()
    source.publish("shards", shard_map(2), author="ops", reason="second")
    assert eventually(lambda: process.current("shards").version == 2, 5)  # type: ignore[union-attr]
    time.sleep(0.3)
    assert source.followers() == {"p": {"shards": 1}}
    process.close()


def test_a_process_cut_off_from_zookeeper_past_its_lease_writes_mysql_but_not_redis(
    private_zookeeper: Any,
    mysql_schema: Any,
    redis_db: Callable[[int], str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    closing: ExitStack,
) -> None:
    """Past its lease it may have missed a new map. Its MySQL writes go on by the last map
    it saw (an operation that moves a shard fences the old master in MySQL itself), and
    that map's read-only window still refuses; its Redis writes are refused (a Redis move
    has no other fence) while reads go on, and resume once ZooKeeper answers. The
    operator's wait counts it until its lease is over, and not after."""
    monkeypatch.setattr(follower_module, "LEASE_SECONDS", 1.5)
    monkeypatch.setattr(config_source, "LEASE_SECONDS", 1.5)
    monkeypatch.setattr(config_source, "LEASE_MARGIN", 0.5)
    spec = f"zk://{private_zookeeper.address}/lease"
    operator = opened(closing, spec)
    operator.publish("shards", shard_map(1), author="ops", reason="first")
    process = follower(closing, spec, tmp_path / "m", process="web-1")
    process.start()
    mysql_schema.clean()
    address = mysql_schema.address
    base = two_host_topology(address, address).as_json()
    store = Store(Topology.from_json({**base, "read_only": [[3, 3]]}), catalog=CATALOG)
    closing.callback(store.close)
    store.hold_seconds = 0  # the window refuses at once
    shards = RedisShards(RedisTopology.single(redis_db(1)), lease=process.lease)
    closing.callback(shards.close)
    client = shards.client("redis1")
    unread = shards.register_read_script("redis1", "return redis.call('ZCARD', KEYS[1])")
    client.zadd("k", {"a": 1})
    assert process.lease() is None and process.status().cut_off is None
    assert "web-1" in operator.followers()
    operator.close()

    private_zookeeper.halt()
    assert eventually(lambda: process.lease() is not None, 10)
    assert "has not answered for" in (process.status().cut_off or "")
    note = store.objects("note").create(0, {"n": 1})  # acknowledged, on MySQL
    assert store.objects("note").get(note) == {"n": 1, "id": note}
    with pytest.raises(ShardMoving):
        store.objects("note").create(3, {"n": 2})
    with pytest.raises(RedisWritesRefused, match="ZADD on Redis instance redis1 refused"):
        client.zadd("k", {"b": 2})
    with client.pipeline(transaction=True) as pipe:
        pipe.zscore("k", "a")
        with pytest.raises(RedisWritesRefused):
            pipe.zadd("k", {"c": 3})  # as it is queued: nothing of the transaction is sent
    with pytest.raises(RedisWritesRefused):  # a script that writes, sent as EVALSHA
        client.register_script("return redis.call('DEL', KEYS[1])")(keys=["k"])
    assert client.zrange("k", 0, -1) == [b"a"] and unread(keys=["k"]) == 1  # reads go on

    private_zookeeper.restart()
    assert eventually(lambda: process.lease() is None, 30)  # it reached ZooKeeper again
    client.zadd("k", {"b": 2})
    assert client.zrange("k", 0, -1) == [b"a", b"b"]
    operator = opened(closing, spec)
    assert "web-1" in operator.followers()
    process.close()
    assert "web-1" not in operator.followers()  # withdrawn at its close
    operator.report("gone-silent", {"shards": 1})  # reported once, then nothing
    assert "gone-silent" in operator.followers()
    assert eventually(lambda: "gone-silent" not in operator.followers(), 10)
    operator.close()


def test_the_local_copy_and_the_file_source_are_readable_by_their_user_alone(
    tmp_path: Path, closing: ExitStack
) -> None:
    previous = os.umask(0o022)  # what a shell usually has: new files readable by all
    try:
        source = FileSource(tmp_path / "config")
        source.publish("shards", shard_map(1), author="ops", reason="first")
        process = follower(closing, str(tmp_path / "config"), tmp_path / "mirror")
        process.start()
        process.close()
    finally:
        os.umask(previous)
    written = [tmp_path / "mirror" / "shards.json", *(tmp_path / "config").rglob("*.json")]
    assert len(written) >= 3  # the copy, the document and its history entry
    assert {oct(stat.S_IMODE(path.stat().st_mode)) for path in written} == {"0o600"}
    assert stat.S_IMODE((tmp_path / "mirror").stat().st_mode) == 0o700


def test_zookeeper_outage_keeps_serving_and_recovers(
    private_zookeeper: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture, closing: ExitStack
) -> None:
    spec = f"zk://{private_zookeeper.address}/outage"
    publisher = opened(closing, spec)
    publisher.publish("shards", shard_map(1), author="ops", reason="first")
    publisher.close()
    seen: list[Revision] = []
    running = follower(closing, spec, tmp_path / "mirror", seen)
    assert running.start().connected

    caplog.set_level(logging.WARNING, logger="shardstore.control.follower")
    private_zookeeper.halt()
    assert eventually(lambda: not running.status().connected, 15)
    assert running.current("shards").version == 1  # type: ignore[union-attr]
    lost = [r for r in caplog.records if "unreachable" in r.getMessage()]
    assert len(lost) == 1  # logged once

    # A process that boots while ZooKeeper is down starts from the local copy.
    booted = follower(closing, spec, tmp_path / "mirror")
    status = booted.start()
    assert status.from_mirror == ("shards",) and status.versions == {"shards": 1}
    assert not status.connected
    assert "since this process started" in (status.cut_off or "")  # no Redis writes

    private_zookeeper.restart()
    assert eventually(lambda: running.status().connected and booted.status().connected, 30)
    publisher = opened(closing, spec)
    publisher.publish("shards", shard_map(2), author="ops", reason="after the outage")
    publisher.close()
    for process in (running, booted):
        assert eventually(lambda p=process: p.current("shards").version == 2, 10)  # type: ignore[misc]
    # The swap runs after the version is taken: wait for it, not for the version.
    assert eventually(lambda: [r.version for r in seen] == [2], 10)
    running.close()
    booted.close()


@pytest.mark.parametrize("where", ["files", "zookeeper"])
def test_followers_report_the_versions_they_have_swapped_in(
    where: str, request: pytest.FixtureRequest, tmp_path: Path, closing: ExitStack
) -> None:
    if where == "files":
        spec = str(tmp_path / "config")
    else:
        spec = f"zk://{request.getfixturevalue('private_zookeeper').address}/followers"
    publisher = opened(closing, spec)
    publisher.publish("shards", shard_map(1), author="ops", reason="first")
    swapped = []

    def slow_swap(revision: Revision) -> None:
        # Still on v1 while the swap runs: a report may come only after it.
        assert publisher.followers()["slow"] == {"shards": 1}
        time.sleep(0.3)
        swapped.append(revision.version)

    slow = follower(closing, spec, tmp_path / "m1", on_change=slow_swap, process="slow")
    other = follower(closing, spec, tmp_path / "m2", process="other")
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


CUT_OFF_PROCESS = """
import sys
from shardstore.control.follower import ConfigFollower
from shardstore.control.sources import open_source
spec, mirror, close = sys.argv[1:]
process = ConfigFollower(lambda: open_source(spec), mirror)
assert process.start().connected
print("following", flush=True)
sys.stdin.readline()  # ZooKeeper is halted meanwhile
if close == "close":
    process.close()
print("leaving", flush=True)
"""


@pytest.mark.parametrize("close", ["close", "exit"])
def test_a_process_cut_off_from_zookeeper_can_close_and_exit(
    private_zookeeper: Any, tmp_path: Path, closing: ExitStack, close: str
) -> None:
    """A request to a ZooKeeper that does not answer waits at most the source's timeout:
    neither the follower's close (its withdrawal) nor the interpreter's exit (which waits
    for kazoo's callback thread) may wait for ZooKeeper to come back."""
    spec = f"zk://{private_zookeeper.address}/cut-off"
    opened(closing, spec).publish("shards", shard_map(1), author="ops", reason="first")
    child = closing.enter_context(
        subprocess.Popen(
            [sys.executable, "-c", CUT_OFF_PROCESS, spec, str(tmp_path / "m"), close],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
    )
    closing.callback(child.kill)  # first: the exit of the Popen waits for it
    assert child.stdout is not None and child.stdin is not None
    assert child.stdout.readline() == "following\n"
    private_zookeeper.halt()
    time.sleep(1)  # the child sees its connection drop and keeps trying
    child.stdin.close()
    try:
        code = child.wait(timeout=60)  # far above the source's timeout, far below forever
    except subprocess.TimeoutExpired:
        pytest.fail(f"a process cut off from ZooKeeper did not {close} within 60s")
    assert code == 0 and child.stdout.read() == "leaving\n"
