"""New MariaDB pairs, which start read-only and replicate from no one (as provisioned):
``open-range`` makes the replica follow the master, opens the master, creates the shards,
waits for the replica, then publishes; ``bring-up`` starts every pair of a new deployment's
first map, before ``init`` creates its shards."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from shardstore import Store, Topology
from shardstore.cli import main
from shardstore.control.file_source import FileSource
from shardstore.control.locks import FileLocks
from shardstore.control.open_range import plan_open_range
from shardstore.control.plans import MemoryJournal, Plan, run
from shardstore.ids import shard_of
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CATALOG
from .replication import APP, APP_LOGIN, REPLICATION, root, start_servers


@pytest.fixture
def servers() -> Iterator[list[MariaDBServer]]:
    """The host of the map so far, then the new pair."""
    servers = start_servers(3)
    try:
        yield servers
    finally:
        for server in servers:
            server.stop()


def _source(tmp_path: Path, old: MariaDBServer) -> FileSource:
    """A map of 4 shards on one host: the new pair takes shards 4..7."""
    source = FileSource(tmp_path / "config")
    source.publish(
        "shards",
        {
            "version": 0,
            "shard_count": 4,
            "lookup_shards": 4,
            "hosts": {"old": f"mysql://{old.address}"},
            "ranges": [{"range": [0, 3], "master": "old"}],
            "open": [[0, 3]],
        },
        author="setup",
        reason="one host",
    )
    return source


def _plan(source: FileSource, master: MariaDBServer, replica: MariaDBServer) -> Plan:
    return plan_open_range(
        source,
        lambda topology: Store(topology, catalog=CATALOG, backend_options=APP_LOGIN),
        count=4,
        master="mysql001a",
        master_address=f"mysql://{master.address}",
        replicas={"mysql001b": f"mysql://{replica.address}"},
        author="ada",
        mysql=root,
    )


def test_a_range_opens_on_a_new_read_only_pair(
    servers: list[MariaDBServer], tmp_path: Path
) -> None:
    old, master, replica = servers
    source = _source(tmp_path, old)
    plan = _plan(source, master, replica)
    assert [line.split("  [")[0] for line in plan.lines()] == [
        "1. check mysql001a and mysql001b: reachable, none of the new shards",
        "2. mysql001b replicates from mysql001a (GTID)",
        "3. open mysql001a for writes",
        "4. create databases db00004..db00007 and their tables",
        "5. wait until mysql001b has the new shards",
        "6. publish shard map v2: range [4, 7] on mysql001a (replicas mysql001b), open [[4, 7]]",
    ]
    outcome = run(plan, journal=MemoryJournal(), locks=FileLocks(tmp_path / "locks"), operator="ada")  # fmt: skip
    assert outcome.ok, outcome.error

    with root(f"mysql://{master.address}") as m, root(f"mysql://{replica.address}") as r:
        assert not m.read_only() and r.read_only()
        assert m.value("SELECT @@global.rpl_semi_sync_master_enabled") == 1
        status = r.replica_status()
        assert status is not None and status.healthy and status.source == master.address
        expected = {f"db{n:05d}" for n in range(4, 8)}
        assert expected <= m.databases() and expected <= r.databases()

    topology = Topology.from_json(source.current("shards").document)
    store = Store(topology, catalog=CATALOG, backend_options=APP_LOGIN)
    try:
        account = store.objects("account").create(store.new_user_shard(), {"login": "first"})
    finally:
        store.close()
    assert 4 <= shard_of(account) <= 7  # new accounts land on the new range
    with root(f"mysql://{master.address}") as m, root(f"mysql://{replica.address}") as r:
        assert r.wait_for(m.gtid_binlog_pos(), 30)
        db = f"db{shard_of(account):05d}"
        assert r.value(f"SELECT COUNT(*) FROM {db}.accounts") == 1  # replicated


def test_a_host_that_holds_shards_of_the_range_already_stops_the_plan(
    servers: list[MariaDBServer], tmp_path: Path
) -> None:
    old, master, replica = servers
    with root(f"mysql://{replica.address}") as r:
        r.query("SET SESSION sql_log_bin = 0")
        r.query("CREATE DATABASE db00005")
    source = _source(tmp_path, old)
    outcome = run(_plan(source, master, replica), journal=MemoryJournal(), locks=FileLocks(tmp_path / "locks"), operator="ada")  # fmt: skip
    assert not outcome.ok
    assert "mysql001b holds 1 of the new shards already (db00005" in str(outcome.error)
    assert source.current("shards").version == 1  # nothing published
    with root(f"mysql://{master.address}") as m, root(f"mysql://{replica.address}") as r:
        assert m.read_only() and r.replica_status() is None  # nothing changed on the hosts


def test_bring_up_starts_every_pair_of_a_new_map_then_init_creates_the_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers = start_servers(4)
    try:
        _bring_up(servers, tmp_path, monkeypatch)
    finally:
        for server in servers:
            server.stop()


def _bring_up(servers: list[MariaDBServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    names = ["mysql001a", "mysql001b", "mysql002a", "mysql002b"]
    bare = {n: f"mysql://{s.address}" for n, s in zip(names, servers, strict=True)}
    document = {  # as toolkit.inventory writes it: no password in the map
        "version": 0,
        "shard_count": 8,
        "lookup_shards": 8,
        "hosts": bare,
        "ranges": [
            {"range": [0, 3], "master": "mysql001a", "replica": "mysql001b"},
            {"range": [4, 7], "master": "mysql002a", "replica": "mysql002b"},
        ],
        "open": [[0, 7]],
    }
    (tmp_path / "shards.json").write_text(json.dumps(document))
    spec = str(tmp_path / "config")
    monkeypatch.setenv("SHARDSTORE_MYSQL_ADMIN", "root:")
    monkeypatch.setenv("SHARDSTORE_MYSQL_REPLICATION", REPLICATION)

    def cli(*args: str) -> tuple[int, str]:
        out = io.StringIO()
        journal = ["--journal", str(tmp_path / "journal.sqlite3")]
        return main(["--topology", spec, *journal, *args], out=out, err=out, catalog=CATALOG), out.getvalue()  # fmt: skip

    status, out = cli("topology", "publish", str(tmp_path / "shards.json"), "--reason", "first map")  # fmt: skip
    assert status == 0, out
    status, out = cli("bring-up")
    assert status == 0, out
    assert [line.split("  [")[0] for line in out.splitlines()[1:7]] == [
        "1. check mysql001a and mysql001b: reachable",
        "2. mysql001b replicates from mysql001a (GTID)",
        "3. open mysql001a for writes",
        "4. check mysql002a and mysql002b: reachable",
        "5. mysql002b replicates from mysql002a (GTID)",
        "6. open mysql002a for writes",
    ]

    # init as the site's user (the map holds no password): the masters are open.
    monkeypatch.setenv("SHARDSTORE_MYSQL_LOGIN", "app:wrong")
    status, out = cli("init")
    assert status == 1 and "Access denied for user 'app'" in out, out
    monkeypatch.setenv("SHARDSTORE_MYSQL_LOGIN", APP)
    status, out = cli("init")
    assert status == 0 and "8 shards ready on 4 host(s)" in out, out
    store = Store(Topology.from_json(document), backend_options=APP_LOGIN, catalog=CATALOG)  # fmt: skip
    try:
        notes = [store.objects("note").create(shard, {"n": shard}) for shard in range(8)]
    finally:
        store.close()
    for master, replica in (servers[:2], servers[2:]):
        with root(f"mysql://{master.address}") as m, root(f"mysql://{replica.address}") as r:
            assert not m.read_only() and r.read_only()
            assert r.wait_for(m.gtid_binlog_pos(), 60)
            assert r.value("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name LIKE 'db0%'") == 4  # fmt: skip
    assert len(notes) == 8

    status, out = cli("bring-up")  # again: every master is open
    assert status == 1 and "nothing to bring up" in out
    # A "new" master that follows another host is no new master: open-range refuses it.
    with root(f"mysql://{servers[1].address}") as r:
        r.query("STOP SLAVE")
        r.query("SET GLOBAL read_only = 1")
    status, out = cli(
        "open-range", "--count", "4", "--master", "mysql003a",
        "--master-address", f"mysql://{servers[1].address}",
    )  # fmt: skip
    assert status == 1 and "not a new master" in out, out
