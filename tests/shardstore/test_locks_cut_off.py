"""An operator cut off from ZooKeeper, where its host locks live: the run stops and undoes
what it did, a new plan is refused, and nothing waits for ZooKeeper to come back.

Runs on a ZooKeeper of its own, which the test halts and restarts.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from shardstore.control.locks import ZooKeeperLocks
from shardstore.control.plans import MemoryJournal, Outcome, Plan, Step, run
from tests.config_documents import eventually


@pytest.fixture
def client(private_zookeeper: Any) -> Iterator[Any]:
    from kazoo.client import KazooClient

    client = KazooClient(hosts=private_zookeeper.address, timeout=2.0)
    client.start()
    yield client
    client.stop()
    client.close()


def within(seconds: float, call: Callable[[], Outcome]) -> Outcome:
    """``call()``'s outcome, failing the test if it is still waiting after ``seconds``."""
    outcome: list[Outcome] = []
    worker = threading.Thread(target=lambda: outcome.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        pytest.fail(f"still waiting on ZooKeeper after {seconds:g}s")
    return outcome[0]


def test_an_operator_cut_off_from_zookeeper_stops_and_new_plans_are_refused(
    private_zookeeper: Any, client: Any
) -> None:
    locks = ZooKeeperLocks(client, "/ops", timeout=1.0)
    done: list[str] = []

    def cut_off() -> str:
        private_zookeeper.halt()
        assert eventually(lambda: not client.connected, 10)
        return "ZooKeeper halted"

    undo_one = Step("one", ("A",), cut_off, lambda: done.append("undo one") or "")
    plan = Plan("demo", "", [undo_one, Step("two", ("A",), lambda: done.append("two") or "")])
    outcome = within(30, lambda: run(plan, journal=MemoryJournal(), locks=locks, operator="ada"))
    assert not outcome.ok and re.fullmatch(
        r"step 2 \(two\) failed: lock /ops/locks/A cannot be checked: "
        r"ZooKeeper at /ops/locks/A/\S+__lock__\d+ is unreachable; 1 steps undone",
        outcome.error,
    )
    assert done == ["undo one"]  # the undo runs: the hosts were the run's when it stopped

    other = Plan("demo", "", [Step("one", ("B",), lambda: done.append("ran") or "")])
    outcome = within(30, lambda: run(other, journal=MemoryJournal(), locks=locks, operator="bo"))
    assert not outcome.ok and outcome.error == "cannot lock host B: ZooKeeper is unreachable"
    assert "ran" not in done

    # The lock on A, which could not be released, goes with its session.
    private_zookeeper.restart()
    assert eventually(lambda: client.connected, 30)
    client.stop()
    from kazoo.client import KazooClient

    again = KazooClient(hosts=private_zookeeper.address)
    again.start()
    try:
        retry = Plan("demo", "", [Step("one", ("A",), lambda: done.append("ran") or "")])
        outcome = run(
            retry, journal=MemoryJournal(), locks=ZooKeeperLocks(again, "/ops"), operator="cy"
        )
        assert outcome.ok and done == ["undo one", "ran"]
    finally:
        again.stop()
        again.close()


def test_a_connection_back_within_the_timeout_finds_the_lock_held(private_zookeeper: Any) -> None:
    """ZooKeeper restarted between two steps (a stalled operator sees the same): the check
    waits for the connection, finds the session whole, and the run goes on."""
    from kazoo.client import KazooClient

    client = KazooClient(hosts=private_zookeeper.address, timeout=10.0)
    client.start()
    try:
        locks = ZooKeeperLocks(client, "/blip", timeout=20.0)
        done: list[str] = []

        def blip() -> str:
            private_zookeeper.halt()
            assert eventually(lambda: not client.connected, 10)
            private_zookeeper.restart()
            return "ZooKeeper restarted"

        plan = Plan("demo", "", [Step("one", ("A",), blip), Step("two", ("A",), lambda: done.append("two") or "")])  # fmt: skip
        outcome = within(60, lambda: run(plan, journal=MemoryJournal(), locks=locks, operator="ada"))  # fmt: skip
        assert outcome.ok, outcome.error
        assert done == ["two"]
    finally:
        client.stop()
        client.close()
