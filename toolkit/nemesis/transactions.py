"""f. Write transactions on a moving shard, begun on the host before ``split`` and committed
after its cut-over (the split stopped right after its final publish, before its rename):
each fails, its writer told, or lands on the new master, never only on the host it left.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator

import MySQLdb

from shardstore import Topology
from shardstore.control.mysql_hosts import endpoint
from shardstore.topology import database_name
from toolkit.drills.base import SETTLE, WARM_UP, DrillError, Result
from toolkit.drills.split import strays

from .base import Nemesis, Paused
from .operator import PLAN_STEP, Split

# -- f ----------------------------------------------------------------------------------


#: A transaction held open: begins, sets the event, yields while held, then commits.
Hold = Callable[[str, threading.Event], Iterator[None]]


class _Transaction(threading.Thread):
    """A slow write transaction (``hold``) whose row carries ``marker``, in a thread: held
    open from ``began`` until ``commit`` is set; ``error``: what its writer was told."""

    def __init__(self, what: str, hold: Hold) -> None:
        super().__init__(name=what, daemon=True)
        self.what, self.hold = what, hold
        self.marker = f"slow-{os.urandom(6).hex()}"
        self.began, self.commit = threading.Event(), threading.Event()
        self.error: str | None = None

    def run(self) -> None:
        try:
            for _ in self.hold(self.marker, self.began):
                self.commit.wait(600)
        except Exception as error:  # noqa: BLE001 - what the writer sees is the figure
            self.error = f"{type(error).__name__}: {error}"
        finally:
            self.began.set()


def _row(marker: str) -> tuple[str]:
    return (json.dumps({"text": marker}),)


def _store_transaction(n: Nemesis, shard: int, *, late: bool) -> Hold:
    def hold(marker: str, began: threading.Event) -> Iterator[None]:
        insert = "INSERT INTO {db}.comments (data) VALUES (%s)"
        with n.store() as store, store.session(shard, write=True) as session:
            if not late:
                session.insert(insert, _row(marker))
            began.set()
            yield
            if late:
                session.insert(insert, _row(marker))

    return hold


def _raw_transaction(n: Nemesis, address: str, shard: int) -> Hold:
    def hold(marker: str, began: threading.Event) -> Iterator[None]:
        user, _, password = n.env["PINBOARD_MYSQL_LOGIN"].partition(":")
        at, port = endpoint(address)
        connection = MySQLdb.connect(host=at, port=port, user=user, password=password, autocommit=True)  # fmt: skip
        try:
            cursor = connection.cursor()
            cursor.execute(f"USE {database_name(shard)}")
            cursor.execute("BEGIN")
            cursor.execute("INSERT INTO comments (data) VALUES (%s)", _row(marker))
            began.set()
            yield
            cursor.execute("COMMIT")
        finally:
            connection.close()

    return hold


def _found(n: Nemesis, topology: Topology, hosts: tuple[str, ...], shard: int, marker: str) -> list[str]:  # fmt: skip
    """Where ``marker``'s row is: ``host:database`` for each of ``shard``'s databases
    (``db00042``, ``db00042_split9``...) on ``hosts`` that holds it."""
    where, shard_db = [], database_name(shard)
    for name in hosts:
        with n.admin(topology, name) as server:
            for db in sorted(d for d in server.databases() if d.partition("_")[0] == shard_db):
                rows = server.query(f"SELECT COUNT(*) AS n FROM `{db}`.comments WHERE data LIKE %s", (f"%{marker}%",))  # fmt: skip
                if int(rows[0]["n"]):
                    where.append(f"{name}:{db}")
    return where


def slow_transaction(n: Nemesis, result: Result) -> None:
    """f. Slow write transactions held open across a split's cut-over."""
    s = Split(n, 600.0)
    host, replica, shard = s.host, s.replica, min(s.movers)
    result.title = f"write transactions on shard {shard} held open across the split of {host} onto {replica}"  # fmt: skip
    plan = PLAN_STEP.findall(n.manage("shardstore", "split", host, "--dry-run").output)
    fence = next((int(k) for k, name in plan if name.startswith("take the site's writes")), 0)
    cut_over = max((int(k) for k, name in plan if name.startswith("publish shard map")), default=0)  # fmt: skip
    if not fence or not cut_over:
        raise DrillError(f"the split's plan has no fence or no final publish: {plan}")
    address, db = s.topology.hosts[host], database_name(shard)
    # fmt: off
    transactions = [
        _Transaction("the site's store, its row written before the split", _store_transaction(n, shard, late=False)),
        _Transaction("the site's store, begun before, its row written after", _store_transaction(n, shard, late=True)),
        _Transaction(f"a MySQL session as the site (USE {db}), written before", _raw_transaction(n, address, shard)),
    ]
    # fmt: on
    s.load.start()
    s.load.wait(WARM_UP)
    for transaction in transactions:
        transaction.start()
        transaction.began.wait(30)
    opened = time.monotonic()
    n.say(f"{len(transactions)} transactions open on shard {shard}; split {host}, paused after step {cut_over}")  # fmt: skip
    split = Paused(n, cut_over, "shardstore", "split", host)
    try:
        paused = split.wait()
        held = time.monotonic() - opened
        for transaction in transactions:
            transaction.commit.set()
            transaction.join(60)
    finally:
        ran = split.finish()
    split_done = time.monotonic()
    after_step = f"after its step {cut_over}" if paused else "after its end (it did not stop)"
    result.figure(f"transactions held {held:.1f} s: from before the split to {after_step} (fence: step {fence})")  # fmt: skip
    if not result.bound("split succeeded", ran.returncode == 0, f"exit {ran.returncode}"):
        result.figures += [f"| {line}" for line in ran.tail().splitlines()]
        return
    after = n.topology()
    number = after.version
    for transaction in transactions:
        where = _found(n, after, (host, replica), shard, transaction.marker)
        landed, failed = f"{replica}:{db}" in where, transaction.error is not None and not where
        what = f"{transaction.what}: fails, or lands on {replica}; never only on {host}"
        result.bound(what, landed or failed, f"{transaction.error or 'committed'}; row in {', '.join(where) or 'no database'}")  # fmt: skip
    s.load.wait(SETTLE)
    stray = strays(n, after, s.load, host, replica, s.movers, split_done, number)
    result.bound("acknowledged writes after the split on a host that gave the shard up", stray == 0, stray)  # fmt: skip
    cleaned = n.manage(
        "shardstore", "cleanup", str(number), "--without-backup"
    )  # (the nemesis's clusters keep none)
    result.bound(f"cleanup {number} succeeded", cleaned.returncode == 0, f"exit {cleaned.returncode} in {cleaned.seconds:.1f} s")  # fmt: skip
    n.finish(result, s.load)
