"""A split's new master lost before cleanup, on real MariaDB replication: it has no replica
to fail over to, and the planned revert needs the reverse stream running. The old host
received (and acknowledged) every write the new master acknowledged through that stream,
so ``split --revert V --emergency`` fences the new master, applies what the stream
received, and gives the shards back to the old host, every acknowledged write with them.
Resumed, never aborted, once the stream is removed; refused, unless data loss is accepted,
when the stream was not receiving when the new master died."""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any

import pytest

from shardstore import InvalidTopology, Store, Topology
from shardstore.backups.store import DirectoryStore
from shardstore.cli import main
from shardstore.control import recovery, reverse_stream
from shardstore.control.file_source import FileSource
from shardstore.control.locks import FileLocks
from shardstore.control.mysql_hosts import HostError
from shardstore.control.plans import MemoryJournal, Plan, StepFailed, run
from shardstore.control.split import plan_split
from shardstore.control.split_cleanup import plan_cleanup
from shardstore.control.split_emergency import plan_split_emergency
from shardstore.control.split_revert import plan_split_revert
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CATALOG
from .replication import APP_LOGIN, app_store, root, sharded_pair


def fenced(host: str, address: str) -> str:
    return f"{host} was killed"


def split_and_written(
    master: MariaDBServer, replica: MariaDBServer, tmp_path: Path, *, applier_stopped: bool = False
) -> tuple[FileSource, list[int]]:
    """Split A onto B (split 3: shards 2..3 to B), then writes acknowledged on both: B's
    alone (A's reverse stream acknowledges nothing) and received by A's stream,
    ``applier_stopped`` before A applied them."""
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    outcome = run(
        plan_split(source, host="A", author="ada", connect=root),
        journal=MemoryJournal(),
        locks=FileLocks(tmp_path / "locks"),
        operator="ada",
    )
    assert outcome.ok, outcome.error
    with root(f"mysql://{replica.address}") as r:
        assert r.semi_sync().replicas == 0  # A's stream acknowledges none of B's commits
    if applier_stopped:
        with root(f"mysql://{master.address}") as m:
            m.query("STOP SLAVE 'revert_split3' SQL_THREAD")
    store = app_store(source)
    written = [store.objects("note").create(n % 4, {"n": n}) for n in range(20)]
    store.close()
    stream_received(master, replica)  # asynchronously: waited for, for the test's sake
    return source, written


def stream_received(master: MariaDBServer, replica: MariaDBServer) -> None:
    """Until A's reverse stream has received all B has written."""
    with root(f"mysql://{replica.address}") as r:
        (end,) = r.query("SHOW MASTER STATUS")
    deadline = time.monotonic() + 15
    with root(f"mysql://{master.address}") as m:
        while True:
            row = reverse_stream.status(m, 3) or {}
            if (row.get("Master_Log_File"), row.get("Read_Master_Log_Pos")) == (end["File"], end["Position"]):  # fmt: skip
                return
            assert time.monotonic() < deadline, f"A's stream has not received B's {end}: {row}"
            time.sleep(0.05)


def stream_lost(master: MariaDBServer) -> dict[str, Any]:
    """Until A's reverse stream has noticed that B is gone (its I/O thread not connected)."""
    deadline = time.monotonic() + 15
    with root(f"mysql://{master.address}") as m:
        while (row := reverse_stream.status(m, 3) or {}).get("Slave_IO_Running") == "Yes":
            assert time.monotonic() < deadline, f"A's stream still sees B: {row}"
            time.sleep(0.05)
    return row


def assert_cut_back(source: FileSource, written: list[int]) -> None:
    """Every shard on A, B out of service, every written row readable and A writable."""
    topology = Topology.from_json(source.current("shards").document)
    assert [(r.first, r.last, r.master, r.replicas) for r in topology.ranges] == [(0, 3, "A", ())]
    assert topology.out_of_service == ("B",) and topology.read_only == ()
    back = Store(topology, catalog=CATALOG, backend_options=APP_LOGIN)
    assert [p["n"] for p in back.objects("note").get_many(written)] == list(range(20))
    assert back.objects("note").create(3, {"n": "back on A"})  # the writes given back
    back.close()


def shardstore(tmp_path: Path, *args: str) -> tuple[int, str]:
    """``python -m shardstore`` on the test's map: exit status, and what it printed."""
    out, err = io.StringIO(), io.StringIO()
    status = main(["--topology", str(tmp_path / "config"), *args], out=out, err=err, catalog=CATALOG)  # fmt: skip
    return status, out.getvalue() + err.getvalue()


def test_the_command_line_takes_emergency_with_a_revert_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHARDSTORE_JOURNAL", str(tmp_path / "journal.sqlite3"))
    status, out = shardstore(tmp_path, "split", "A", "--emergency", "--dry-run")
    assert status == 1 and "--emergency goes with --revert SPLIT only" in out
    status, out = shardstore(tmp_path, "split", "--revert", "3", "--accept-data-loss")
    assert status == 1 and "--accept-data-loss goes with --emergency only" in out


def test_a_lost_new_master_is_cut_back_with_all_its_stream_received(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    master, replica = pair
    source, written = split_and_written(master, replica, tmp_path, applier_stopped=True)
    with root(f"mysql://{master.address}") as m:  # received, not applied
        assert m.value("SELECT COUNT(*) FROM db00003.notes") == 0
    with pytest.raises(InvalidTopology, match="B answers: revert split 3 as planned"):
        plan_split_emergency(source, split=3, author="ada", fence=fenced, connect=root)

    replica.halt(kill=True)
    stream_lost(master)
    with pytest.raises(
        InvalidTopology, match=r"cannot be reverted.*`split --revert 3 --emergency`"
    ):
        plan_split_revert(source, split=3, author="ada", connect=root)
    with pytest.raises(InvalidTopology, match="no fence command"):
        plan_split_emergency(source, split=3, author="ada", fence=None, connect=root)
    with pytest.raises(InvalidTopology, match="B, the master of shards 2-3, does not answer: the copies split 3 left may be the only other ones"):  # fmt: skip
        plan_cleanup(source, split=3, author="ada", connect=root, store=DirectoryStore(tmp_path / "backups"))  # fmt: skip
    with pytest.raises(HostError, match="B had no replica: its commits were acknowledged by no other server"):  # fmt: skip
        plan_split_emergency(source, split=3, author="ada", fence=fenced, connect=root)
    plan = plan_split_emergency(
        source, split=3, author="ada", fence=fenced, connect=root, accept_data_loss=True
    )
    assert "acknowledged by no other server" in plan.params["data_loss"]
    for name, value in (("JOURNAL", "journal.sqlite3"), ("FENCE_COMMAND", "true"), ("MYSQL_ADMIN", "root:")):  # fmt: skip
        monkeypatch.setenv(f"SHARDSTORE_{name}", str(tmp_path / value) if name == "JOURNAL" else value)  # fmt: skip
    status, out = shardstore(
        tmp_path, "split", "--revert", "3", "--emergency", "--accept-data-loss", "--dry-run"
    )
    assert status == 0 and out.startswith(plan.summary + "\n" + plan.lines()[0]), out
    assert [line.split("  [")[0] for line in plan.lines()] == [
        "1. confirm B is down, from the operator and from revert_split3 on A",
        "2. fence B",
        "3. stop revert_split3 receiving on A; apply all it received",
        "4. stop and remove revert_split3 on A: it cannot follow B again",
        "5. give the site's writes on shards 2..3 back on A",
        "6. publish shard map v4: shards 2..3 mastered by A; B out of service",
    ]
    journal = MemoryJournal()
    outcome = run(plan, journal=journal, locks=FileLocks(tmp_path / "locks"), operator="ada")
    assert outcome.ok, outcome.error
    assert "applied all it received" in outcome.notes[2]
    assert_cut_back(source, written)
    with root(f"mysql://{master.address}") as m:
        assert reverse_stream.status(m, 3) is None


def died_after(plan: Plan, steps: int, journal: MemoryJournal) -> None:
    entry = journal.begin(plan, operator="ada", dry_run=False)
    for index, step in enumerate(plan.steps[:steps], 1):
        journal.step(entry, index, step.name, step.run() or "done")


def test_a_cut_back_whose_stream_was_stopped_takes_accepted_loss_and_is_resumed(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """A's stream stopped by hand, then B took writes alone (its semi-sync falls back with
    no replica connected) and died: A lacks them. Refused, then cut back with
    --accept-data-loss, the journal naming the gap; the run killed once the stream is
    removed is resumed, not aborted."""
    master, replica = pair
    source, written = split_and_written(master, replica, tmp_path)
    with root(f"mysql://{master.address}") as m:
        m.query("STOP SLAVE 'revert_split3' IO_THREAD")
    store = app_store(source)
    lost = store.objects("note").create(3, {"n": "on B alone"})
    store.close()
    replica.halt(kill=True)

    with pytest.raises(HostError, match=r"I/O thread is stopped \(by hand\).*--accept-data-loss"):
        plan_split_emergency(source, split=3, author="ada", fence=fenced, connect=root)
    plan = plan_split_emergency(
        source, split=3, author="ada", fence=fenced, connect=root, accept_data_loss=True
    )
    with root(f"mysql://{master.address}") as m:
        applied = str(m.value("SELECT @@global.gtid_slave_pos"))
    b_domain = next(p for p in applied.split(",") if not p.startswith("0-"))
    assert f"domain {b_domain.split('-')[0]}: every transaction after {b_domain}" in plan.summary

    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")
    died_after(plan, 4, journal)  # the stream removed, then kill -9
    assert "ACCEPTED DATA LOSS" in journal.entries[0].steps[0][2]
    [dead] = journal.open_operations()

    def end(how: str) -> str:
        return recovery.end(
            dead.id, how, source=source, journal=journal, locks=locks, operator="bob",
            connect=root, fence=fenced,
        )  # fmt: skip

    with pytest.raises(StepFailed, match="step 4 took effect: resume"):
        end("abort")
    assert "resumed by bob after step 4: 6 steps done" in end("resume")
    assert journal.open_operations() == []
    back = app_store(source)
    assert back.objects("note").get_many([lost]) == []  # what the journal said may be lost
    back.close()
    assert_cut_back(source, written)  # (its local id is taken again on A)
