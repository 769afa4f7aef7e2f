"""``shardstore restore`` on real MariaDB: a range whose master and replica are both killed
comes back onto new hosts from its replica's backup and the master's archived binary
logs, as of a second: the writes committed by then readable, the later ones not, the new
master taking writes acknowledged by the new replica. A run killed part way leaves the
live map untouched, and is aborted, or resumed (its scratch server made again). Refused, with nothing changed: a
range that still answers, a host that serves a range, a time in the future or before the
oldest backup."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from shardstore.backups.physical import take
from shardstore.backups.store import DirectoryStore
from shardstore.control import recovery
from shardstore.control.cli_restore import target
from shardstore.control.config_source import ConfigError
from shardstore.control.file_source import FileSource
from shardstore.control.locks import FileLocks
from shardstore.control.plans import MemoryJournal, Plan
from shardstore.control.restore import plan_restore
from shardstore.exceptions import InvalidTopology
from shardstore.replicas import replicas_of
from tests.conftest import unavailable
from toolkit.servers.mariadb import MariaDBServer

from .replication import app_store, replicating, root, running, sharded_pair
from .test_binlog_archive import LOGIN, archive_until_caught_up, archiving
from .test_failover import die_after


def test_a_lost_range_is_restored_onto_new_hosts_as_of_a_second(tmp_path: Path) -> None:
    if shutil.which("mariadb-backup") is None or shutil.which("mariadb-binlog") is None:
        unavailable("mariadb-backup", "mariadb-backup and mariadb-binlog are needed (Debian: mariadb-backup, mariadb-client)")  # fmt: skip
    with running(4) as (master, replica, c, d):
        restored_as_of_a_second(master, replica, c, d, tmp_path=tmp_path)


def restored_as_of_a_second(
    master: MariaDBServer, replica: MariaDBServer, c: MariaDBServer, d: MariaDBServer, *, tmp_path: Path
) -> None:  # fmt: skip
    replicating(master, replica)
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    current = source.current("shards").document
    hosts = {**current["hosts"], "C": f"mysql://{c.address}", "D": f"mysql://{d.address}"}
    source.publish("shards", {**current, "hosts": hosts}, author="setup", reason="two new hosts")
    backups = DirectoryStore(tmp_path / "backups")
    archiver = archiving(backups, master, tmp_path / "spool")

    store = app_store(source)
    notes = store.objects("note")
    backed_up = [notes.create(n % 4, {"n": n}) for n in range(4)]
    take(backups, host="B", address=f"mysql://{replica.address}", login=LOGIN, ranges="0-3")
    kept = [notes.create(n % 4, {"n": n}) for n in range(4, 8)]
    wanted = int(time.time())  # as of this second: the first eight
    time.sleep(wanted + 1.05 - time.time())
    later = [notes.create(n % 4, {"n": n}) for n in range(8, 12)]
    store.close()
    archive_until_caught_up(archiver, master)
    archiver.stop()

    def refused(match: str, **options: object) -> None:
        with pytest.raises(InvalidTopology, match=match):
            plan_restore(source, backups, **{"span": [0, 3], "onto": ["C", "D"], "author": "ada", "to_time": wanted, "connect": root, **options})  # type: ignore[arg-type]  # fmt: skip

    refused("A, a host of range 0-3, answers: a restore replaces a range whose every host is lost")
    master.halt(kill=True)
    replica.halt(kill=True)
    refused("no range 0-2", span=[0, 2])
    refused("A serves shards 0-3: a restore goes onto hosts that serve no range", onto=["A"])
    refused("is in the future", to_time=time.time() + 3600)
    refused("is before the oldest backup of range 0-3", to_time=wanted - 3600)
    before = source.current("shards").version

    def planned() -> Plan:
        return plan_restore(source, backups, span=[0, 3], onto=["C", "D"], author="ada", to_time=wanted, connect=root)  # fmt: skip

    journal, locks = MemoryJournal(), FileLocks(tmp_path / "locks")
    dead = planned()
    assert source.current("shards").version == before  # planning changes nothing
    die_after(dead, 2, journal)  # killed once the scratch server was made and C copied
    dead.steps[-1].run()  # its scratch server dies with it
    [left] = journal.open_operations()
    again = recovery.plan_again(left, source, author="bob", connect=root)
    assert recovery.abort(left, again, journal=journal, locks=locks, operator="bob").startswith("aborted by bob after step 2")  # fmt: skip
    assert source.current("shards").version == before  # the live map untouched

    dead = planned()
    die_after(dead, 3, journal)  # C and D copied, this time
    dead.steps[-1].run()
    [left] = journal.open_operations()
    again = recovery.plan_again(left, source, author="bob", connect=root)
    done = recovery.resume(left, again, journal=journal, locks=locks, operator="bob")
    assert done == "resumed by bob after step 3: 6 steps done", done
    document = source.current("shards").document
    [entry] = document["ranges"]
    assert (entry["master"], replicas_of(entry)) == ("C", ["D"])
    assert sorted(document["out_of_service"]) == ["A", "B"]

    store = app_store(source)
    notes = store.objects("note")
    found = {obj["n"] for obj in notes.get_many(backed_up + kept + later)}
    assert found == set(range(8)), found  # the later four were committed after the target
    after = notes.create(2, {"n": "after the restore"})  # acknowledged by D
    assert notes.get(after)["n"] == "after the restore"  # type: ignore[index]
    store.close()
    with root(f"mysql://{d.address}") as r, root(f"mysql://{c.address}") as m:
        assert r.wait_for(m.gtid_binlog_pos(), 30)
        status = r.replica_status()
        assert status is not None and status.healthy and r.acknowledges()
    assert isinstance(source, FileSource)


def test_the_target_of_a_restore_is_a_time_a_gtid_or_latest() -> None:
    assert target("latest") == (None, None)
    assert target("0-1-42,7-3-2") == (None, "0-1-42,7-3-2")
    assert target("2026-11-29T08:30:00Z") == (1795941000.0, None)
    assert target("2026-11-29 08:30:00") == (1795941000.0, None)
    for bad in ("yesterday", "0-1", "2026-13-01T00:00:00Z", ""):
        with pytest.raises(ConfigError, match=r"a time .*, a GTID .*, or latest"):
            target(bad)
