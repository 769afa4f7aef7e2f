"""The operator's own process killed (e), and a slow transaction across a split (f).

e. ``shardstore failover``, ``split`` and ``split --revert`` killed (``kill -9``) right after
each step they journal but the last, then ended by ``abort`` (``resume`` where abort
refuses: a step that commits had run): the shards take a write within 5 s of that command
being run, the pair replicates (where the operation keeps one), nothing is left open.

f. Write transactions on a moving shard, begun on the host before ``split`` and committed
after its cut-over (the split stopped right after its final publish, before its rename):
each fails, its writer told, or lands on the new master, never only on the host it left.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import MySQLdb

from shardstore import Topology, shard_of
from shardstore.control.locks import HostsBusy, locks_for
from shardstore.control.mysql_hosts import HostError, endpoint
from shardstore.control.split import halves, shards_in, spans
from shardstore.topology import database_name
from toolkit.drills.base import SETTLE, WARM_UP, DrillError, Ran, Result, healthy_pair
from toolkit.drills.split import strays
from toolkit.load.pinners import Pinner, ensure_pinners
from toolkit.load.traffic import Load
from toolkit.site_processes import ROOT

from .base import Nemesis, stopped, writable_within

#: Issue bound: the affected shards take a write within this many seconds of abort/resume.
WRITABLE = 5.0
CAP = 1200.0  # the load runs through every kill of case e (minutes), never longer
HORIZON = 30.0  # how long an ending is watched for a first write, bound or not
LEFT_OPEN_WITHIN = 30.0  # a killed run's ZooKeeper session, and its locks, expire by then
_PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] (.*) \(at \+[\d.]+s\)$", re.MULTILINE)
_PLAN_STEP = re.compile(r"^(\d+)\. (.*)$", re.MULTILINE)


class _Split:
    """The pair a case works on, its shards cut as ``split`` cuts them, and a load whose
    pinners are grouped: the shards that move, those that stay, the other master's."""

    def __init__(self, n: Nemesis, cap: float) -> None:
        self.topology = topology = n.topology()
        self.host, self.replica = healthy_pair(n, topology)
        staying, moving = halves([r.as_json() for r in topology.ranges if r.master == self.host])
        self.movers = set(shards_in(moving))
        self.spans = spans(moving), spans(staying)
        self.moving, self.staying = f"{self.host} (moving)", f"{self.host} (staying)"
        others = sorted({r.master for r in topology.ranges} - {self.host})
        groups = [self.moving, self.staying, *others]
        pinners = ensure_pinners(n.site, n.dir / "pinners.json", topology, per_group=3, group=self.group, groups=groups)  # fmt: skip
        # Two writers a group, not the drills' three: the operator's commands, whose start-up
        # the bounds count, share the machine's two cores with the load and the site.
        self.load = n.track(Load(n.site, pinners, topology, group=self.group, writers_per_group=2, pause=0.05, max_seconds=cap))  # fmt: skip

    def group(self, pinner: Pinner) -> str:
        shard = shard_of(pinner.user_id)
        if shard in self.movers:
            return self.moving
        master = self.topology.master_of(shard)
        return self.staying if master == self.host else master


# -- e ----------------------------------------------------------------------------------


def _open_operations(n: Nemesis) -> list[dict[str, Any]]:
    ran = n.manage("shardstore", "operations", "--json")
    if ran.returncode != 0:
        raise DrillError(f"shardstore operations: exit {ran.returncode}: {ran.tail(3)}")
    return list(json.loads(ran.output[ran.output.index("[") :]))


def _left_open(n: Nemesis, what: str) -> dict[str, Any]:
    """The one open operation (``operations``), once its killed process's ZooKeeper session
    has expired and its locks with it (polled as ``operations`` does, by taking them, but
    in this process: a ``manage.py`` per poll would load the machine being measured)."""
    rows = _open_operations(n)
    if len(rows) != 1:
        raise DrillError(f"{what}: expected one open operation, found {rows}")
    locks, deadline = locks_for(n.source), time.monotonic() + LEFT_OPEN_WITHIN
    while True:
        try:
            with locks.hold(rows[0]["locks"], owner="the nemesis: is the killed run's session gone?"):  # fmt: skip
                return rows[0]
        except HostsBusy:
            if time.monotonic() > deadline:
                raise DrillError(f"{what}: its locks still held after {LEFT_OPEN_WITHIN:g} s") from None  # fmt: skip
            time.sleep(0.2)


def _pair(n: Nemesis, host: str, replica: str, *, replicating: bool) -> tuple[bool, str]:
    """With ``replicating``: ``replica`` replicates from ``host`` without error, read-only,
    and ``host`` is writable (waiting up to 10 s for the threads); else both are writable
    and replicate from no one (a split stands)."""
    topology = n.topology()
    source = "{}:{}".format(*endpoint(topology.hosts[host]))
    deadline, measured = time.monotonic() + 10, ""
    while True:
        try:
            with n.admin(topology, host) as m, n.admin(topology, replica) as r:
                status, host_ro, replica_ro = r.replica_status(), m.read_only(), r.read_only()
        except HostError as error:
            ok, measured = False, str(error)
        else:
            health = "" if status is None else f" ({'healthy' if status.healthy else status.last_error or 'stopped'})"  # fmt: skip
            follows = "no one" if status is None else host if status.source == source else status.source  # fmt: skip
            measured = f"{replica} replicates from {follows}{health}, read_only {host}={int(host_ro)} {replica}={int(replica_ro)}"  # fmt: skip
            healthy = bool(status and status.healthy and follows == host)
            ok = (healthy and replica_ro if replicating else status is None and not replica_ro) and not host_ro  # fmt: skip
        if ok or time.monotonic() > deadline:
            return ok, measured
        time.sleep(0.25)


@dataclass
class _Ended:
    """One kill and its ending: the plan's steps, ``abort`` or ``resume`` (and whether abort
    refused first), how long the ending ran, and seconds from its start to the first write
    on every affected group (None: none within ``HORIZON``)."""

    steps: int
    ending: str
    refused: bool
    ran: float
    writable: float | None

    @property
    def late(self) -> bool:
        return self.writable is None or self.writable > WRITABLE

    def text(self) -> str:
        took = f"no write in {HORIZON:g} s" if self.writable is None else f"{self.writable:.2f} s"
        return f"{self.ending} ran {self.ran:.1f} s, writable {took} after it was run"


def _kill_and_end(n: Nemesis, s: _Split, command: list[str], step: int, groups: list[str]) -> _Ended:  # fmt: skip
    """``command`` run and killed after ``step``, then aborted (resumed if abort refuses)."""
    killed = n.manage_until_step(step, "shardstore", *command)
    progress = _PROGRESS.findall(killed.output)
    if killed.returncode != -signal.SIGKILL or not progress:
        raise DrillError(f"{' '.join(command)} was not killed after step {step}: exit {killed.returncode}: {killed.tail(5)}")  # fmt: skip
    operation = _left_open(n, f"{' '.join(command)} killed after step {step}")
    if operation["after_step"] != step:
        raise DrillError(f"operation {operation['id']} journaled up to step {operation['after_step']}, not {step}")  # fmt: skip
    began = time.monotonic()
    ran = n.manage("shardstore", "abort", str(operation["id"]))
    ending, refused = "abort", ran.returncode != 0 and "resume the operation" in ran.output
    if refused:
        began, ending = time.monotonic(), "resume"
        ran = n.manage("shardstore", "resume", str(operation["id"]))
    if ran.returncode != 0:
        raise DrillError(f"{ending} {operation['id']} after step {step}: exit {ran.returncode}: {ran.tail(5)}")  # fmt: skip
    took = [writable_within(s.load, g, began, HORIZON) for g in groups]
    writable = None if None in took else max(t for t in took if t is not None)
    return _Ended(int(progress[0][1]), ending, refused, ran.seconds, writable)


#: What the pair is after an ending: replicating, two masters (a split stands), or no pair.
REPLICATING, TWO_MASTERS = "replicating", "two masters"


def _killed_each_step(
    n: Nemesis, result: Result, s: _Split, what: str, command: list[str], groups: list[str],
    pair: Mapping[str, str | None],
) -> None:  # fmt: skip
    """``command`` killed after each step but the last, then ended; ``pair``: what the pair
    is after each ending (``abort``, ``resume``), None where there is none to check."""
    step, total, worst, problems = 1, 2, 0.0, []
    while step < total:
        n.say(f"{what}: kill -9 after step {step}")
        ended = _kill_and_end(n, s, command, step, groups)
        total = ended.steps
        figure = f"{what} killed after step {step}/{total}: {ended.text()}"
        if ended.late and ended.ending == "abort":  # measured once more, both figures shown
            ended = _kill_and_end(n, s, command, step, groups)
            figure += f"; killed and aborted again: {ended.text()}"
        if ended.late:
            problems.append(f"step {step}: not writable within {WRITABLE:g} s")
        worst = max(worst, HORIZON if ended.writable is None else ended.writable)
        expected = pair.get(ended.ending)
        if expected is not None:
            ok, measured = _pair(n, s.host, s.replica, replicating=expected == REPLICATING)
            figure += f"; {measured}"
            if not ok:
                problems.append(f"step {step}: {measured}")
        if ended.refused:
            figure += " (abort refused: a step that commits had run)"
        left = _open_operations(n)
        if left:
            problems.append(f"step {step}: operations still open: {left}")
        result.figure(figure)
        step += 1
    result.bound(
        f"{what}: each kill ended, writable within {WRITABLE:g} s, pair as expected, nothing open",
        not problems,
        "; ".join(problems) or f"{total - 1} kills, longest {worst:.2f} s until writable",
    )


def operator_killed(n: Nemesis, result: Result) -> None:
    """e. The operator killed with ``kill -9`` after each step of planned failover, split
    and revert in turn: abort (or resume) leaves the shards writable within 5 s, the
    pair replicating; nothing acknowledged lost."""
    s = _Split(n, CAP)
    host, replica = s.host, s.replica
    result.title = f"the operator killed after each step of failover, split and revert of {host}/{replica}"  # fmt: skip
    result.figure(f"shards {s.spans[0]} move in the split, {s.spans[1]} stay on {host}")
    s.load.start()
    s.load.wait(WARM_UP)
    began = time.monotonic()
    both = [s.moving, s.staying]
    _killed_each_step(n, result, s, "failover", ["failover", host], both, {"abort": REPLICATING})
    failover_done = time.monotonic()
    # A split killed after its final publish is resumed: it stands, the pair is two masters.
    split = {"abort": REPLICATING, "resume": TWO_MASTERS}
    _killed_each_step(n, result, s, "split", ["split", host], [s.moving], split)
    split_done, current = time.monotonic(), n.source.current("shards")
    if not current.reason.startswith("split "):
        raise DrillError(f"no split stands after the split's kills: map v{current.version}: {current.reason}")  # fmt: skip
    # Aborted, the revert leaves the split standing; resumed, the replica out of service.
    revert, ends = ["split", "--revert", str(current.version)], {"abort": TWO_MASTERS, "resume": None}  # fmt: skip
    _killed_each_step(n, result, s, f"revert of split {current.version}", revert, [s.moving], ends)
    result.figure(f"time: failover {failover_done - began:.0f} s, split {split_done - failover_done:.0f} s, revert {time.monotonic() - split_done:.0f} s")  # fmt: skip
    s.load.wait(SETTLE)
    n.finish(result, s.load)


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


class _Paused:
    """``manage.py ARGS`` run until it stops itself right after step ``step`` (``wait``);
    then ``finish`` continues it (SIGCONT) and waits for its end."""

    def __init__(self, n: Nemesis, step: int, *args: str) -> None:
        env = {**n.env, "SHARDSTORE_STOP_AFTER_STEP": str(step)}
        self.began = time.monotonic()
        self.process = subprocess.Popen([sys.executable, "manage.py", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip

    def wait(self, timeout: float = 300) -> bool:
        deadline = time.monotonic() + timeout
        while not stopped(self.process.pid) and self.process.poll() is None:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return self.process.poll() is None

    def finish(self, timeout: float = 600) -> Ran:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
        try:
            output = self.process.communicate(timeout=timeout)[0]
        except subprocess.TimeoutExpired:
            self.process.kill()
            output = self.process.communicate()[0]
        return Ran(self.process.returncode, output, time.monotonic() - self.began)


def slow_transaction(n: Nemesis, result: Result) -> None:
    """f. Slow write transactions held open across a split's cut-over."""
    s = _Split(n, 600.0)
    host, replica, shard = s.host, s.replica, min(s.movers)
    result.title = f"write transactions on shard {shard} held open across the split of {host} onto {replica}"  # fmt: skip
    plan = _PLAN_STEP.findall(n.manage("shardstore", "split", host, "--dry-run").output)
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
    split = _Paused(n, cut_over, "shardstore", "split", host)
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
    cleaned = n.manage("shardstore", "cleanup", str(number))
    result.bound(f"cleanup {number} succeeded", cleaned.returncode == 0, f"exit {cleaned.returncode} in {cleaned.seconds:.1f} s")  # fmt: skip
    n.finish(result, s.load)
