"""A split's reverse stream on real MariaDB: ``shardstore pairs`` reports it (running, lag,
error, its filter) with the pair of the master it replicates from, and it is what
acknowledges the new master's commits: a stalled old host stalls them, a resumed one
releases them, none lost."""

from __future__ import annotations

import io
import json
import os
import signal
import time
from pathlib import Path

import pytest

from shardstore.cli import main
from shardstore.control.mysql_hosts import ReplicaStatus
from shardstore.control.pairs import Look, Pair, Stream, judge, pair_health
from shardstore.control.split import plan_split
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CATALOG
from .replication import app_store, root, sharded_pair
from .test_split import execute


def reverse(pairs: list[Pair], master: str) -> Stream:
    [found] = [p for p in pairs if p.master == master]
    [stream] = found.streams
    return stream


def test_pairs_reports_a_splits_reverse_stream_with_its_new_master(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    execute(plan_split(source, host="A", author="ada", connect=root), tmp_path)
    document = source.current("shards").document
    found = pair_health(document, root)
    stream = reverse(found, "B")
    assert (stream.name, stream.host, stream.source_name) == ("revert_split3", "A", "B")
    assert stream.healthy, stream.problems
    assert [p.master for p in found if p.streams] == ["B"]  # listed once, with B's pair
    text = "\n".join(p.text() for p in found)
    assert "  stream revert_split3 on A from B: healthy, 0s behind" in text

    with root(f"mysql://{master.address}") as m:
        m.query("STOP SLAVE 'revert_split3' SQL_THREAD")
    assert reverse(pair_health(document, root), "B").problems == ("SQL thread stopped",)

    monkeypatch.setenv("SHARDSTORE_MYSQL_ADMIN", "root:")
    out, err = io.StringIO(), io.StringIO()
    command = ["--topology", str(tmp_path / "config"), "pairs", "--json"]
    assert main(command, out=out, err=err, catalog=CATALOG) == 1, err.getvalue()
    [b] = [p for p in json.loads(out.getvalue()) if p["master"] == "B"]
    assert b["streams"] == [
        {
            "name": "revert_split3",
            "host": "A",
            "source": "B",
            "running": False,
            "lag_seconds": None,
            "error": "",
            "healthy": False,
            "problems": ["SQL thread stopped"],
        }
    ]

    with root(f"mysql://{master.address}") as m:  # as a restart of A leaves it
        m.query("SET GLOBAL revert_split3.replicate_wild_do_table = ''")
        m.query("START SLAVE 'revert_split3' SQL_THREAD")
    assert reverse(pair_health(document, root), "B").problems == (
        "its table filter is lost (a restart?): a revert refuses it",
    )


def test_a_stream_is_judged_by_its_threads_lag_source_and_filter() -> None:
    document = {
        "hosts": {"A": "mysql://127.0.0.1:3306", "B": "mysql://127.0.0.1:3307"},
        "ranges": [{"range": [0, 1], "master": "A"}, {"range": [2, 3], "master": "B"}],
    }

    def problems(status: ReplicaStatus, name: str = "revert_split3", filter: str = "db0000_.%") -> tuple[str, ...]:  # fmt: skip
        looks = {"A": Look(streams=(Stream("", name, status, filter),)), "B": Look()}
        return tuple(s for p in judge(document, looks) for st in p.streams for s in st.problems)

    from_b = "127.0.0.1:3307"
    assert problems(ReplicaStatus(from_b, True, True, 0, "")) == ()
    assert problems(ReplicaStatus(from_b, True, True, 31, "")) == ("31s behind (at most 30s)",)
    assert problems(ReplicaStatus(from_b, False, True, None, "", io_state="Connecting")) == (
        "I/O thread Connecting",
    )
    assert problems(ReplicaStatus(from_b, True, False, None, "Duplicate entry")) == (
        "SQL thread stopped",
        "error: Duplicate entry",
    )
    assert problems(ReplicaStatus("127.0.0.1:3999", True, True, 0, "")) == (
        "its source 127.0.0.1:3999 is no host of the map",
    )
    assert problems(ReplicaStatus(from_b, True, True, 0, ""), filter="") == (
        "its table filter is lost (a restart?): a revert refuses it",
    )
    assert problems(ReplicaStatus(from_b, True, True, 0, ""), name="other", filter="") == ()


def test_a_stalled_old_host_never_holds_the_new_masters_commits(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """The reverse stream acknowledges nothing (the old host is no replica the map names):
    with the old host stopped (SIGSTOP), a commit on a moved shard completes at once, no
    session waits on the new master, and once resumed the old host has it too."""
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    execute(plan_split(source, host="A", author="ada", connect=root), tmp_path)
    store = app_store(source)
    store.objects("note").create(3, {"n": "before"})
    b = f"mysql://{replica.address}"
    os.kill(master.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        store.objects("note").create(3, {"n": "stalled"})
        assert time.monotonic() - started < 2, "a commit waited for A's acknowledgement"
        with root(b) as r:
            waiting = r.query("SHOW STATUS LIKE 'Rpl_semi_sync_master_wait_sessions'")
            assert int(waiting[0]["Value"]) == 0 and r.semi_sync().replicas == 0
    finally:
        os.kill(master.pid, signal.SIGCONT)
    deadline = time.monotonic() + 15
    with root(f"mysql://{master.address}") as m:
        while m.value("SELECT COUNT(*) FROM db00003.notes WHERE data LIKE '%stalled%'") != 1:
            assert time.monotonic() < deadline, "A did not apply the stalled commit"
            time.sleep(0.1)
        assert not m.acknowledges()
    store.close()
