"""The pair health check on real MariaDB replication: a master is backed up only while its
replica follows it and its commits wait for that replica; and a master with no replica yet
(promoted, split off) runs with semi-sync armed, alone until a replica connects."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from shardstore.cli import main
from shardstore.control.file_source import FileSource
from shardstore.control.mysql_hosts import ReplicaStatus, SemiSync
from shardstore.control.pairs import Look, judge, pair_health
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CATALOG
from .replication import publish_pair, root, start_servers

KEPT = SemiSync(enabled=True, falls_back=False, replicas=1)
FOLLOWING = ReplicaStatus("127.0.0.1:3306", True, True, 0, "")


def document(**changes: Any) -> dict[str, Any]:
    base = {
        "hosts": {"A": "mysql://127.0.0.1:3306", "B": "mysql://127.0.0.1:3307"},
        "ranges": [{"range": [0, 3], "master": "A", "replica": "B"}],
    }
    return {**base, **changes}


def test_a_master_is_backed_up_only_with_every_condition_met() -> None:
    healthy = {"A": Look(semi_sync=KEPT), "B": Look(replication=FOLLOWING)}
    [pair] = judge(document(), healthy)
    assert pair.healthy and pair.under_replicated  # one replica: it works, one short
    assert pair.text() == "A -> B (strict): healthy (under-replicated: 2 wanted)\n  replica B healthy, 0s behind"  # fmt: skip

    def problems(doc: dict[str, Any], **looks: Look) -> tuple[str, ...]:
        [pair] = judge(doc, {**healthy, **looks})
        return pair.problems

    lagging = ReplicaStatus("127.0.0.1:3306", True, True, 31, "")
    broken = ReplicaStatus("127.0.0.1:3306", True, False, None, "Duplicate entry")
    elsewhere = ReplicaStatus("127.0.0.1:3999", True, True, 0, "")
    assert problems(document(), B=Look(replication=lagging)) == ("B is 31s behind (at most 30s)",)
    assert problems(document(), B=Look(replication=broken)) == (
        "B's replication is broken: Duplicate entry",
    )
    assert problems(document(), B=Look(replication=elsewhere)) == (
        "B replicates from 127.0.0.1:3999, not from its master",
    )
    assert problems(document(), B=Look(error="no answer")) == ("B cannot be asked: no answer",)
    assert problems(document(out_of_service=["B"])) == ("B is out of service",)
    armed = SemiSync(enabled=True, falls_back=True, replicas=1)
    assert problems(document(), A=Look(semi_sync=armed)) == (
        "semi-sync falls back to asynchronous when no replica is connected",
    )
    alone = SemiSync(enabled=True, falls_back=False, replicas=0)
    assert problems(document(), A=Look(semi_sync=alone)) == ("no replica acknowledges its commits",)
    shared = SemiSync(enabled=True, falls_back=False, replicas=2)  # a split's reverse stream, say
    assert problems(document(), A=Look(semi_sync=shared)) == (
        "2 servers acknowledge its commits, more than the replicas the map names (1): one"
        " that is not a replica may release a commit alone",
    )
    unpaired = document(ranges=[{"range": [0, 3], "master": "A"}])
    assert problems(unpaired) == ("no replica in the shard map",)
    embedded = document(hosts={"A": "sqlite:///tmp/a", "B": "sqlite:///tmp/b"})
    assert judge(embedded, {}) == []


def test_the_check_follows_a_real_pair_and_its_exit_status_says_so(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica)
    document = source.current("shards").document
    [found] = pair_health(document, root)
    assert found.healthy, found.problems

    with root(f"mysql://{replica.address}") as r:
        r.query("STOP SLAVE SQL_THREAD")
    [found] = pair_health(document, root)
    assert found.problems == ("B's replication is broken: stopped",)

    monkeypatch.setenv("SHARDSTORE_MYSQL_ADMIN", "root:")
    out, err = io.StringIO(), io.StringIO()
    command = ["--topology", str(tmp_path / "config"), "pairs", "--json"]
    assert main(command, out=out, err=err, catalog=CATALOG) == 1, err.getvalue()
    assert json.loads(out.getvalue()) == [
        {
            "master": "A",
            "replicas": [
                {
                    "name": "B",
                    "healthy": False,
                    "lag_seconds": None,
                    "problems": ["B's replication is broken: stopped"],
                }
            ],
            "durability": "strict",
            "healthy": False,
            "under_replicated": True,
            "problems": ["B's replication is broken: stopped"],
            "streams": [],
        }
    ]


def test_an_armed_master_commits_alone_then_waits_for_the_replica_that_connects() -> None:
    master, replica = start_servers(2)
    try:
        with root(f"mysql://{master.address}") as m:
            m.arm_semi_sync()
            m.set_read_only(False)
            m.query("CREATE DATABASE db00000")
            m.query("CREATE TABLE db00000.t (n INT)")
            m.query("INSERT INTO db00000.t VALUES (1)")  # no replica: it does not wait
            assert m.semi_sync() == SemiSync(enabled=True, falls_back=True, replicas=0)
            with root(f"mysql://{replica.address}") as r:
                r.replicate_from(m)
                assert r.wait_for(m.gtid_binlog_pos(), 30)
                m.set_semi_sync(True)  # the replica follows: no fallback any more
                assert m.semi_sync().kept
                r.query("STOP SLAVE")

                def write() -> None:
                    with root(f"mysql://{master.address}") as w:
                        w.query("INSERT INTO db00000.t VALUES (2)")

                waiting = threading.Thread(target=write, daemon=True)
                waiting.start()
                waiting.join(1.0)
                assert waiting.is_alive(), "a commit did not wait for the replica's ack"
                r.query("START SLAVE")
                waiting.join(30)
                assert not waiting.is_alive()
    finally:
        replica.stop()
        master.stop()
