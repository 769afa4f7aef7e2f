"""``python -m shardstore --topology SPEC topology ...`` and the operations, on a file source
and on ZooKeeper alike."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from shardstore.cli import main
from shardstore.control.sources import open_source
from tests.config_documents import shard_map
from toolkit.processes import free_port

from .catalog import CATALOG

_roots = itertools.count(1)


@pytest.fixture(params=["files", "zookeeper"])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "files":
        return str(tmp_path / "config")
    zookeeper = request.getfixturevalue("zookeeper_server")
    return f"zk://{zookeeper.address}/cli-{next(_roots)}"


@pytest.fixture(autouse=True)
def journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The journal file every command of a test shares (``SHARDSTORE_JOURNAL``)."""
    path = tmp_path / "journal.sqlite3"
    monkeypatch.setenv("SHARDSTORE_JOURNAL", str(path))
    return path


def cli(spec: str, *args: str) -> tuple[int, str]:
    """Exit status, and what was printed (standard output, then errors)."""
    out, err = io.StringIO(), io.StringIO()
    status = main(["--topology", spec, *args], out=out, err=err, catalog=CATALOG)
    return status, out.getvalue() + err.getvalue()


def current(spec: str) -> Any:
    source = open_source(spec)
    try:
        return source.current("shards")
    finally:
        source.close()


def write(tmp_path: Path, document: dict[str, Any]) -> str:
    path = tmp_path / f"doc-{next(_roots)}.json"
    path.write_text(json.dumps(document))
    return str(path)


def test_publish_show_history_diff_and_rollback(spec: str, tmp_path: Path) -> None:
    status, out = cli(spec, "topology", "publish", write(tmp_path, shard_map(1)), "--reason", "first", "--dry-run")  # fmt: skip
    assert status == 0 and "publish shard map v1: first" in out and "dry run" in out
    status, out = cli(spec, "topology", "show")
    assert status == 1 and "shardstore: shards: nothing published" in out

    assert cli(spec, "topology", "publish", write(tmp_path, shard_map(1)), "--reason", "first")[0] == 0  # fmt: skip
    status, out = cli(spec, "topology", "publish", write(tmp_path, shard_map(2)), "--reason", "split", "--expect-version", "1")  # fmt: skip
    assert status == 0 and '+      "master": "db2"' in out  # the diff is shown
    status, out = cli(spec, "topology", "show", "--version", "1")
    assert json.loads(out)["ranges"] == [{"range": [0, 15], "master": "db1"}]
    status, out = cli(spec, "topology", "history")
    lines = out.splitlines()
    assert (
        lines[0].startswith("v2 ") and lines[0].endswith(": split") and lines[1].startswith("v1 ")
    )
    status, out = cli(spec, "topology", "diff", "1", "2")
    assert out.startswith("--- version 1\n+++ version 2\n") and '+      "master": "db2"' in out

    status, out = cli(spec, "topology", "rollback", "1", "--reason", "split went wrong")
    assert status == 0
    now = current(spec)
    assert now.version == 3 and now.reason == "rollback to v1: split went wrong"
    assert now.document == {**shard_map(1), "version": 3}


def test_publish_refuses_an_invalid_document_or_a_stale_version(spec: str, tmp_path: Path) -> None:
    cli(spec, "topology", "publish", write(tmp_path, shard_map(1)), "--reason", "first")
    bad = shard_map(2)
    bad["ranges"].pop()
    status, out = cli(spec, "topology", "publish", write(tmp_path, bad), "--reason", "oops")
    assert status == 1 and "shardstore: gap: shards 8..15 are in no range" in out
    status, out = cli(spec, "topology", "publish", write(tmp_path, shard_map(2)), "--reason", "x", "--expect-version", "7")  # fmt: skip
    assert status == 1 and "version 1 is current, not 7" in out
    status, out = cli(spec, "topology", "publish", str(tmp_path / "missing.json"), "--reason", "x")  # fmt: skip
    assert status == 1 and "cannot read a JSON document" in out
    assert current(spec).version == 1


def test_operations_print_their_plan_and_dry_runs_change_nothing(spec: str, tmp_path: Path) -> None:
    cli(spec, "topology", "publish", write(tmp_path, shard_map(1)), "--reason", "first")
    status, out = cli(spec, "close-range", "0", "7", "--dry-run")
    assert status == 0
    assert out.splitlines()[:2] == [
        "close shards 0..7 to new users; open stays [[8, 15]]",
        "1. publish shard map v2: open [[8, 15]]",
    ]
    assert current(spec).version == 1
    status, out = cli(spec, "close-range", "0", "7")
    assert status == 0 and "[1/1] publish shard map v2" in out and "done in" in out
    assert current(spec).document["open"] == [[8, 15]]


def test_failover_prints_its_plan_and_refuses_an_emergency_with_no_replica_up(
    spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = shard_map(1)
    closed = [f"mysql://127.0.0.1:{free_port()}" for _ in range(2)]
    document["hosts"] = {"db1": closed[0], "db2": closed[1]}
    document["ranges"][0]["replica"] = "db2"
    cli(spec, "topology", "publish", write(tmp_path, document), "--reason", "a pair")
    status, out = cli(spec, "failover", "db1", "--dry-run")
    assert status == 0
    assert [line.split("  [")[0] for line in out.splitlines()[:7]] == [
        "fail over db1 to db2 (shards 0..15)",
        "1. check db2 replicates from db1 and is caught up",
        "2. set read_only on db1, end its client sessions; no write lands for 0.5s",
        "3. wait until db2 has applied all of db1's writes (GTID)",
        "4. make db1 replicate from db2",
        "5. publish shard map v2: shards 0..15 mastered by db2",
        "6. clear db2's read_only",
    ]
    status, out = cli(spec, "diff", "db1", "db3")
    assert status == 1 and "no host db3 in the shard map" in out
    status, out = cli(spec, "failover", "db1", "--emergency", "--dry-run")
    assert status == 1 and "no fence command is set" in out
    status, out = cli(spec, "failover", "db1", "--accept-data-loss", "--dry-run")
    assert status == 1 and "--accept-data-loss goes with --emergency only" in out
    monkeypatch.setenv("SHARDSTORE_FENCE_COMMAND", "true")
    status, out = cli(spec, "failover", "db1", "--emergency", "--dry-run")
    assert status == 1 and "no replica of db1 answers (db2)" in out
    assert current(spec).version == 1


@pytest.mark.parametrize("where", ["shard-map file", "zookeeper"])
def test_a_document_written_by_hand_becomes_the_first_version_of_the_history(
    where: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A map in place that no publish wrote (a file, or a znode, made by hand): the first
    publish keeps it in the history, so diff and rollback reach it."""
    by_hand = json.dumps({**shard_map(1), "version": 1})
    if where == "shard-map file":
        spec = str(tmp_path / "shards.json")
        Path(spec).write_text(by_hand)
    else:
        from kazoo.client import KazooClient

        zookeeper = request.getfixturevalue("zookeeper_server")
        root = f"/by-hand-{next(_roots)}"
        spec = f"zk://{zookeeper.address}{root}"
        client = KazooClient(hosts=zookeeper.address)
        client.start(timeout=10)
        try:
            client.create(f"{root}/shards", by_hand.encode(), makepath=True)
        finally:
            client.stop()
            client.close()
    status, out = cli(spec, "topology", "show")
    assert status == 0 and json.loads(out) == json.loads(by_hand)

    status, out = cli(spec, "topology", "publish", write(tmp_path, shard_map(2)), "--reason", "split", "--expect-version", "1")  # fmt: skip
    assert status == 0, out
    status, out = cli(spec, "topology", "history")
    lines = out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("v2 ") and lines[0].endswith(": split")
    assert lines[1].startswith("v1 ") and "(unknown): in place before the first publish" in lines[1]
    status, out = cli(spec, "topology", "diff", "1", "2")
    assert status == 0 and out.startswith("--- version 1\n+++ version 2\n") and '+      "master": "db2"' in out  # fmt: skip

    status, out = cli(spec, "topology", "rollback", "1", "--reason", "back to the hand-made map")
    assert status == 0, out
    now = current(spec)
    assert now.version == 3 and now.document == {**shard_map(1), "version": 3}
    status, out = cli(spec, "topology", "publish", write(tmp_path, shard_map(2)), "--reason", "again")  # fmt: skip
    assert status == 0 and len(cli(spec, "topology", "history")[1].splitlines()) == 4  # kept once


def test_an_operation_without_a_journal_shows_its_plan_and_refuses_to_run(
    spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli(spec, "topology", "publish", write(tmp_path, shard_map(1)), "--reason", "first")
    monkeypatch.delenv("SHARDSTORE_JOURNAL")
    status, out = cli(spec, "close-range", "0", "7", "--dry-run")
    assert status == 0 and "1. publish shard map v2: open [[8, 15]]" in out
    status, out = cli(spec, "close-range", "0", "7")
    assert status == 1 and "close-range refused: no journal to record it in" in out
    assert current(spec).version == 1


def test_a_run_left_open_in_the_journal_file_is_listed_and_ended_by_a_later_command(
    spec: str, tmp_path: Path, journal: Path
) -> None:
    """A command killed part way leaves its entry open in the file: another command sees
    it, no operation takes its locks, and ``abort`` (here ``--close``) ends it."""
    from shardstore.control.close_range import plan_close_range
    from shardstore.control.journal_file import FileJournal

    cli(spec, "topology", "publish", write(tmp_path, shard_map(1)), "--reason", "first")
    source = open_source(spec)
    try:
        plan = plan_close_range(source, first=0, last=7, author="ada")
    finally:
        source.close()
    dead = FileJournal(journal).begin(plan, operator="ada", dry_run=False)  # killed at once
    status, out = cli(spec, "operations", "--json")
    (row,) = json.loads(out[out.index("[") :])
    assert status == 0 and row["id"] == dead and row["state"] == "left open"
    status, out = cli(spec, "close-range", "0", "7")
    assert status == 1 and f"operation {dead} (close shards 0..7" in out and "left open" in out
    status, out = cli(spec, "abort", str(dead))  # a close cannot be planned again: closed
    assert status == 1 and "cannot be planned again" in out
    status, out = cli(spec, "abort", str(dead), "--close")
    assert status == 0, out
    assert cli(spec, "operations", "--json")[1].strip().endswith("[]")
    assert cli(spec, "close-range", "0", "7")[0] == 0
