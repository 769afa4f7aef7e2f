"""``shardstore reopen HOST`` on real MariaDB: a split's new master that restarts comes back
read-only and in its server's default GTID domain; reopened, it writes again in the domain
the shard map records for it, so the split's reverse stream keeps applying and the split
can still be reverted. And what it refuses."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from shardstore import ShardUnavailable, Topology
from shardstore.cli import main
from shardstore.control import reverse_stream
from shardstore.control.file_source import FileSource
from shardstore.control.grant_fence import give_writes_back, take_writes
from shardstore.control.locks import FileLocks
from shardstore.control.mysql_hosts import HostError, SemiSync
from shardstore.control.plans import MemoryJournal, Plan, Step, run
from shardstore.control.reopen import plan_reopen
from shardstore.control.split import plan_split
from shardstore.control.split_revert import plan_split_revert
from shardstore.exceptions import InvalidTopology
from tests.config_documents import shard_map
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CATALOG
from .replication import app_store, root, sharded_pair
from .test_split import execute, titles


def domain(server: MariaDBServer) -> int:
    with root(f"mysql://{server.address}") as host:
        return int(host.value("SELECT @@global.gtid_domain_id"))


def restart(server: MariaDBServer) -> None:
    server.halt()
    server.restart()


def cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    command = ["--topology", str(tmp_path / "config"), "--journal", str(tmp_path / "journal"), *args]  # fmt: skip
    status = main(command, out=out, err=err, catalog=CATALOG)
    return status, out.getvalue() + err.getvalue()


def test_a_split_master_that_restarted_is_reopened_in_its_own_domain_and_still_reverts(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    execute(plan_split(source, host="A", author="ada", connect=root), tmp_path)
    split = source.current("shards").document
    assert split["domains"] == {"B": 3}  # the split's number, recorded in the map it published
    assert domain(replica) == 3
    store = app_store(source)
    before = store.objects("note").create(3, {"n": "before the restart"})

    restart(replica)  # B comes back read-only, in its server's default domain
    b = f"mysql://{replica.address}"
    with root(b) as r:
        assert r.read_only() and r.replica_status() is None
    assert domain(replica) == 0
    with pytest.raises(ShardUnavailable):
        store.objects("note").create(3, {"n": "refused while read-only"})

    monkeypatch.setenv("SHARDSTORE_MYSQL_ADMIN", "root:")
    status, out = cli(tmp_path, "reopen", "B")
    assert status == 0, out
    assert "1. check B: master in the map, read-only, replicates from no one" in out
    assert "B writes in GTID domain 3" in out and "B writable" in out
    assert domain(replica) == 3
    with root(b) as r:
        assert not r.read_only()
    # It commits alone while no replica is connected (A's stream acknowledges nothing).
    with root(b) as r:
        assert r.semi_sync() == SemiSync(enabled=True, falls_back=True, replicas=0)

    after = store.objects("note").create(3, {"n": "after the restart"})
    with root(f"mysql://{master.address}") as m, root(b) as r:
        position = reverse_stream.caught_up(m, r, 30)
        assert position.startswith("3-2-")  # B's own domain, written by B (server id 2)
        assert "runs from" in reverse_stream.check(m, r, 3, [2, 3])
        assert m.value("SELECT COUNT(*) FROM db00003.notes WHERE data LIKE '%after the%'") == 1

    # Reopening again is refused: it is writable already.
    with pytest.raises(HostError, match=r"B is writable already \(GTID domain 3\)"):
        plan_reopen(source, host="B", author="ada", connect=root)

    # The split can still be reverted: A has B's writes, before and after the restart.
    execute(plan_split_revert(source, split=3, author="ada", connect=root), tmp_path)
    reverted = Topology.from_json(source.current("shards").document)
    assert [(r.first, r.last, r.master) for r in reverted.ranges] == [(0, 3, "A")]
    back = app_store(source)
    assert titles(back, [before, after]) == ["before the restart", "after the restart"]
    store.close()
    back.close()


def test_reopen_refuses_a_host_it_cannot_show_is_the_only_writable_master(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    a, b = f"mysql://{master.address}", f"mysql://{replica.address}"
    with pytest.raises(InvalidTopology, match="names B master of no range"):
        plan_reopen(source, host="B", author="ada", connect=root)  # a replica
    with pytest.raises(InvalidTopology, match="no host C"):
        plan_reopen(source, host="C", author="ada", connect=root)
    with pytest.raises(HostError, match="A is writable already"):
        plan_reopen(source, host="A", author="ada", connect=root)

    execute(plan_split(source, host="A", author="ada", connect=root), tmp_path)
    restart(replica)
    # A holds its copies of the moved shards, the site's writes on them taken away: fine.
    # Given back (a hand mistake), two hosts would take writes on them: refused.
    with root(a) as m:
        give_writes_back(m, ["db00002"])
    with pytest.raises(HostError, match=r"A takes the site's writes on 1 of B's shards \(db00002"):
        plan_reopen(source, host="B", author="ada", connect=root)
    with root(a) as m:
        take_writes(m, ["db00002"])

    # A replica of someone, by its default connection or a named one, is not reopened.
    with root(b) as r, root(a) as m:
        r.replicate_from(m)
    with pytest.raises(HostError, match=r"B replicates from 127\.0\.0\.1:"):
        plan_reopen(source, host="B", author="ada", connect=root)
    with root(b) as r:
        r.stop_replicating()
        r.query(
            "CHANGE MASTER 'other' TO MASTER_HOST=%s, MASTER_PORT=%s, MASTER_USER='repl',"
            " MASTER_PASSWORD='repl-password', MASTER_USE_GTID=no",
            (master.host, master.port),
        )
    with pytest.raises(HostError, match="B replicates from others by other"):
        plan_reopen(source, host="B", author="ada", connect=root)
    with root(b) as r:
        r.query("RESET SLAVE 'other' ALL")

    # A run left open on B (its process died) holds B: the reopen waits for abort or resume.
    plan = plan_reopen(source, host="B", author="ada", connect=root)
    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")
    dead = Plan("split-revert", "a revert whose process died", [Step("cut back", ("B",), str)])
    journal.begin(dead, operator="bob", dry_run=False)
    outcome = run(plan, journal=journal, locks=locks, operator="ada")
    assert not outcome.ok and "was left open" in outcome.error
    with root(b) as r:
        assert r.read_only()


def test_the_map_refuses_a_gtid_domain_two_hosts_share_or_an_unknown_host_has(
    tmp_path: Path,
) -> None:
    document = shard_map(2)
    hosts = list(document["hosts"])
    ok = {**document, "domains": {hosts[0]: 7}}
    assert Topology.from_json(ok).domains == {hosts[0]: 7}
    assert Topology.from_json(ok).as_json()["domains"] == {hosts[0]: 7}
    assert "domains" not in Topology.from_json(document).as_json()  # old maps load as they were
    for bad, message in [
        ({"nobody": 7}, "domains names unknown host 'nobody'"),
        ({hosts[0]: 0}, "a GTID domain is an int in 1.."),
        ({hosts[0]: 7, hosts[-1]: 7}, "two hosts write in one GTID domain"),
    ]:
        with pytest.raises(InvalidTopology, match=message):
            Topology.from_json({**document, "domains": bad})
    source = FileSource(tmp_path / "config")
    source.publish("shards", ok, author="ada", reason="a domain")
    assert source.current("shards").document["domains"] == {hosts[0]: 7}
