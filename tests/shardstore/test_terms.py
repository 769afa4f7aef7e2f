"""Operation terms on real MariaDB and ZooKeeper: an operator paused past its ZooKeeper
session, then resumed under a newer operation, changes nothing (never two writable
masters)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shardstore.control import terms
from shardstore.control.failover import plan_failover
from shardstore.control.file_source import FileSource
from shardstore.control.locks import FileLocks, Mark, ZooKeeperLocks
from shardstore.control.plans import MemoryJournal, Plan, Step, run
from toolkit.servers.mariadb import MariaDBServer

from .replication import root, sharded_pair


@pytest.fixture
def zookeeper(zookeeper_server: Any) -> Iterator[Any]:
    """A way to open ZooKeeper clients, each an operator's session; closed after."""
    from kazoo.client import KazooClient

    opened: list[Any] = []

    def client() -> Any:
        opened.append(KazooClient(hosts=zookeeper_server.address))
        opened[-1].start()
        return opened[-1]

    yield client
    for c in opened:
        c.stop()
        c.close()


def test_terms_only_grow_whoever_draws_them(tmp_path: Path, zookeeper: Any) -> None:
    files = FileLocks(tmp_path / "locks")
    assert [files.next_term() for _ in range(3)] == [1, 2, 3]
    root_path = f"/terms-{tmp_path.name}"
    one, two = ZooKeeperLocks(zookeeper(), root_path), ZooKeeperLocks(zookeeper(), root_path)
    drawn = [one.next_term(), two.next_term(), one.next_term()]
    assert drawn == sorted(set(drawn)) and len(drawn) == 3


def test_a_runs_mark_outlives_its_session_until_it_is_removed(tmp_path: Path, zookeeper: Any) -> None:  # fmt: skip
    """Marks (open runs, whichever journal has them) are persistent nodes: a session that
    ends, as a killed operator's does, leaves them for the next session to see."""
    root_path = f"/marks-{tmp_path.name}"
    dying = zookeeper()
    mark = Mark("k1", "the journal file ops.sqlite3", ("A", "@config"), "failover of A (ada)")
    ZooKeeperLocks(dying, root_path).mark(mark)
    dying.stop()
    later = ZooKeeperLocks(zookeeper(), root_path)
    assert later.marks() == [mark]
    later.unmark("k1")
    later.unmark("k1")  # gone already: nothing to do
    assert later.marks() == []


def writable(address: str) -> bool:
    with root(f"mysql://{address}") as server:
        return not server.read_only()


def paused(
    source: FileSource, tmp_path: Path, zookeeper: Any, *, step: Step
) -> tuple[Plan, ZooKeeperLocks, Any]:
    """The first two steps of a failover of A (check, freeze) by an operator whose session
    is ``client``, then ``step``, in which the test pauses it."""
    client = zookeeper()
    locks = ZooKeeperLocks(client, f"/ops-{tmp_path.name}", timeout=1.0)
    failover = plan_failover(source, host="A", author="ada", connect=root, quiet_seconds=0.1)
    return Plan("failover", "paused", [*failover.steps[:2], step]), locks, client


def newer_failover(source: FileSource, tmp_path: Path, zookeeper: Any) -> None:
    """Another operator, once the paused one's session is gone, fails A over to B."""
    locks = ZooKeeperLocks(zookeeper(), f"/ops-{tmp_path.name}", timeout=1.0)
    plan = plan_failover(source, host="A", author="bob", connect=root, quiet_seconds=0.1)
    outcome = run(plan, journal=MemoryJournal(), locks=locks, operator="bob")
    assert outcome.ok, outcome.error


def test_a_paused_operators_undo_changes_nothing_a_newer_operation_claimed(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path, zookeeper: Any
) -> None:
    """Paused after freezing A, its session expires, a newer failover hands A's shards to
    B; resumed, the paused run fails and would thaw A: it is refused, A stays read-only."""
    master, replica = pair
    source = sharded_pair(*pair, tmp_path=tmp_path, caught_up=False)
    cell: dict[str, Any] = {}

    def pause() -> str:
        cell["client"].stop()  # its session ends, and its locks with it
        newer_failover(source, tmp_path, zookeeper)
        raise RuntimeError("resumed after a long pause")

    plan, locks, cell["client"] = paused(source, tmp_path, zookeeper, step=Step("pause", ("A",), pause))  # fmt: skip
    journal = MemoryJournal()
    outcome = run(plan, journal=journal, locks=locks, operator="ada")
    assert not outcome.ok and "undoing step 2" in outcome.error
    assert "taken over by a newer operation" in outcome.error or "lost" in outcome.error
    assert writable(replica.address) and not writable(master.address)  # one master: B
    assert [op.done for op in journal.open_operations()] == [2]  # left for abort


def test_a_paused_operators_open_session_is_ended_by_a_newer_claim(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path, zookeeper: Any
) -> None:
    """Paused between its lock check and a statement, on a session it opened before: a
    newer run's first connection to the server (here one that only looks) ends that
    session, so the statement never lands; a new session of the old run is refused."""
    master, _ = pair
    source = sharded_pair(*pair, tmp_path=tmp_path, caught_up=False)
    cell: dict[str, Any] = {}
    address = f"mysql://{master.address}"

    def look() -> str:
        with root(address) as a:
            return f"read_only={a.read_only()}"

    def thaw_after_a_pause() -> str:
        with root(address) as a:
            cell["client"].stop()
            newer = ZooKeeperLocks(zookeeper(), f"/ops-{tmp_path.name}", timeout=1.0)
            looked = run(Plan("look", "", [Step("look", ("A",), look)]), journal=MemoryJournal(), locks=newer, operator="bob")  # fmt: skip
            assert looked.ok, looked.error
            a.set_read_only(False)  # what it was about to do when it was paused
        return "thawed"

    step = Step("thaw", ("A",), thaw_after_a_pause)
    plan, locks, cell["client"] = paused(source, tmp_path, zookeeper, step=step)
    outcome = run(plan, journal=MemoryJournal(), locks=locks, operator="ada")
    assert not outcome.ok and "step 3 (thaw) failed" in outcome.error
    assert not writable(master.address)
    older = terms.Term(1, "ada: failover", lambda: None)
    with terms.running(older), pytest.raises(terms.Superseded, match="taken over by a newer"):
        root(address)
