"""The guard replaces a dead replica by a spare host, on real MariaDB replication: the
dead one out of service, the spare a copy of the master that acknowledges its commits;
a second death in the range within the cool-down waits for a person; with no spare and
no provision command the replacement is refused with the reason, and a provision
command's new server is added to the map and used. A range short of replicas (the moved
half of a split, which starts with none) is given a spare as one more."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shardstore.control.context import Control
from shardstore.control.file_source import FileSource
from shardstore.control.guard import GUARD, Guard, status
from shardstore.control.locks import FileLocks
from shardstore.control.plans import MemoryJournal
from shardstore.control.replacement import Provision, command_provision, trouble
from shardstore.control.split import plan_split
from shardstore.replicas import replicas_of
from tests.config_documents import eventually
from toolkit.servers.mariadb import MariaDBServer

from .replication import app_store, replicating, root, running, sharded_pair
from .test_emergency_recovery import killed
from .test_split import execute

Servers = tuple[MariaDBServer, MariaDBServer, MariaDBServer]


@pytest.fixture
def servers() -> Iterator[Servers]:
    """A master, its replica, and a third server that replicates from no one (a spare)."""
    with running(3) as (master, replica, spare):
        replicating(master, replica)
        yield master, replica, spare


def guard_on(
    source: FileSource, tmp_path: Path, provision: Provision | None = None, *, wanted: int = 1
) -> Guard:
    def no_store(*_: Any) -> Any:
        raise AssertionError("the guard opens no store")

    control = Control(
        source, no_store, no_store, MemoryJournal(), FileLocks(tmp_path / "locks"), GUARD,
        mysql=root, fence=killed, provision=provision,
    )  # fmt: skip
    return Guard(control, confirm_seconds=0, replace_after=0, wanted=wanted)


def with_spare(source: FileSource, spare: MariaDBServer) -> None:
    current = source.current("shards")
    hosts = {**current.document["hosts"], "S": f"mysql://{spare.address}"}
    source.publish("shards", {**current.document, "hosts": hosts}, author="setup", reason="a spare")  # fmt: skip


def replicas_in(source: FileSource) -> list[str]:
    return list(replicas_of(source.current("shards").document["ranges"][0]))


def acknowledges(server: MariaDBServer, master: MariaDBServer) -> bool:
    with root(f"mysql://{server.address}") as s:
        status = s.replica_status()
        return bool(status and status.healthy and status.source == master.address and s.acknowledges())  # fmt: skip


def test_a_dead_replica_is_replaced_by_a_spare(servers: Servers, tmp_path: Path) -> None:
    master, replica, spare = servers
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    with_spare(source, spare)
    store = app_store(source)
    written = [store.objects("note").create(n % 4, {"n": n}) for n in range(8)]
    store.close()
    guard = guard_on(source, tmp_path)
    assert guard.tick() == []  # every host well: nothing to do

    replica.halt(kill=True)
    [replacing] = guard.tick()
    assert replacing.kind == "replacing" and replacing.host == "B", replacing
    assert "B, a replica of A (0-3), does not answer" in replacing.evidence
    assert "rebuild S as the replica of A (shards 0..3), in the place of B" in replacing.evidence
    guard.replicas.join(120)
    [replaced, _] = guard.decisions()
    assert replaced.kind == "replaced", replaced.evidence
    assert replaced.detected is not None and replaced.took is not None and replaced.took > 0
    assert status(source).counts == {"replacing": 1, "replaced": 1}
    document = source.current("shards").document
    assert replicas_in(source) == ["S"] and document["out_of_service"] == ["B"]
    assert acknowledges(spare, master)
    store = app_store(source)
    store.objects("note").create(1, {"n": "after"})  # its commits are acknowledged again
    assert [store.objects("note").get(n)["n"] for n in written] == list(range(8))
    store.close()
    [run] = guard.control.journal.entries  # type: ignore[attr-defined]
    assert run.operator == GUARD and run.ok and run.operation == "rebuild"

    spare.halt(kill=True)  # the replacement dies too, within the cool-down
    [said, waits] = guard.tick()  # (the replacement's outcome, said at the next pass)
    assert said == replaced
    assert waits.kind == "replace-cooling-down" and "it waits for a person" in waits.evidence
    assert replicas_in(source) == ["S"]


def test_with_no_spare_the_replacement_is_refused_and_a_provisioned_one_is_used(
    servers: Servers, tmp_path: Path
) -> None:
    master, replica, spare = servers
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    replica.halt(kill=True)
    [refused] = guard_on(source, tmp_path).tick()
    assert refused.kind == "replace-refused"
    assert "no spare host: the map has no spare, and no provision command is set" in refused.evidence  # fmt: skip
    assert replicas_in(source) == ["B"]  # nothing changed

    script = tmp_path / "provision"
    script.write_text('echo "names: $*" >&2\necho "not a host"\n')
    [garbled] = guard_on(source, tmp_path, command_provision(f"sh {script}")).tick()
    assert garbled.kind == "replace-refused" and "printed 'not a host', not NAME mysql://HOST:PORT" in garbled.evidence  # fmt: skip
    assert "S" not in source.current("shards").document["hosts"]

    script.write_text(f'[ "$*" = "A B" ] || exit 3\necho "S mysql://{spare.address}"\n')
    guard = guard_on(source, tmp_path, command_provision(f"sh {script}"))
    [replacing] = guard.tick()
    assert replacing.kind == "replacing" and "S, provisioned (the map has no spare)" in replacing.evidence  # fmt: skip
    guard.replicas.join(120)
    assert guard.decisions()[0].kind == "replaced", guard.decisions()[0].evidence
    assert replicas_in(source) == ["S"] and acknowledges(spare, master)


def test_a_replica_whose_replication_stopped_on_an_error_is_broken(
    servers: Servers, tmp_path: Path
) -> None:
    master, replica, _ = servers
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    document = source.current("shards").document
    assert trouble(root, document, "B") is None

    def broken() -> str | None:
        return trouble(root, document, "B")

    def log_in(password: str) -> None:
        with root(f"mysql://{replica.address}") as r:
            r.query("STOP SLAVE")
            r.query("CHANGE MASTER TO master_password = %s", (password,))
            r.query("START SLAVE")

    log_in("not-its-password")  # its I/O thread cannot log in to its master
    assert eventually(lambda: "Access denied" in str(broken()), 30), broken()
    log_in("repl-password")
    assert eventually(lambda: broken() is None, 30), broken()

    with root(f"mysql://{replica.address}") as r:  # a row the master does not have, as a bug
        r.query("SET SESSION sql_log_bin = 0")
        r.query("CREATE TABLE db00001.stray (id INT PRIMARY KEY)")
        r.query("INSERT INTO db00001.stray VALUES (1)")
    with root(f"mysql://{master.address}") as m:
        m.query("CREATE TABLE IF NOT EXISTS db00001.stray (id INT PRIMARY KEY)")
        m.query("INSERT INTO db00001.stray VALUES (1)")  # the replica's applier stops on it
    assert eventually(lambda: broken() is not None, 30)
    assert "answers, but its replication stopped:" in str(broken())
    with root(f"mysql://{replica.address}") as r:
        r.query("STOP SLAVE")
        r.query("RESET SLAVE ALL")
    assert trouble(root, document, "B") == "answers, but replicates from no one"


def test_the_moved_half_of_a_split_is_given_a_replica(tmp_path: Path) -> None:
    with running(4) as (master, taker, kept, spare):
        replicating(master, taker, kept)
        source = sharded_pair(master, taker, kept, tmp_path=tmp_path)  # A, with B and C
        execute(plan_split(source, host="A", to="B", author="ada", connect=root), tmp_path)
        with_spare(source, spare)  # S
        store = app_store(source)
        before = store.objects("note").create(3, {"n": "alone"})  # on B, acknowledged by no one
        store.close()
        guard = guard_on(source, tmp_path, wanted=1)  # A keeps C: B, with none, is short

        [adding] = guard.tick()
        assert (adding.host, adding.kind) == ("B", "adding"), adding
        assert "B (2-3) has had 0 replicas of the 1 wanted" in adding.evidence
        assert (
            "rebuild S as the replica of B (shards 2..3): S, a spare of the map" in adding.evidence
        )
        guard.replicas.join(120)
        [added, _] = guard.decisions()
        assert added.kind == "added" and added.took is not None, added.evidence
        ranges = {r["master"]: replicas_of(r) for r in source.current("shards").document["ranges"]}  # fmt: skip
        assert ranges == {"A": ["C"], "B": ["S"]}
        assert acknowledges(spare, taker) and acknowledges(kept, master)
        store = app_store(source)
        after = store.objects("note").create(3, {"n": "acknowledged by S"})
        assert [store.objects("note").get(i)["n"] for i in (before, after)] == ["alone", "acknowledged by S"]  # fmt: skip
        store.close()
        with root(f"mysql://{spare.address}") as s, root(f"mysql://{taker.address}") as b:
            assert s.wait_for(b.gtid_binlog_pos(), 30)
            assert s.query("SELECT COUNT(*) AS n FROM db00003.notes")[0]["n"] == 2
        assert guard.tick() == [added]  # (said at the next pass)
        assert guard.tick() == []  # each range has what it should
