"""What every nemesis case shares: a local cluster of its own, made fresh for the case
(a case may use up a master/replica pair, and a rebuild takes minutes), the
drills' tools on it (toolkit/drills/base.py), the test hosts it makes (network.py), and
the figures every case reports."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from io import StringIO
from pathlib import Path
from typing import TextIO

from shardstore.control.mysql_hosts import HostError
from toolkit.cluster import mysql
from toolkit.cluster.commands import down, up
from toolkit.cluster.plan import MARIADB
from toolkit.cluster.state import Cluster
from toolkit.drills.base import Drills, Ran
from toolkit.load.traffic import Load
from toolkit.processes import stopped
from toolkit.site_processes import ROOT

from .network import Namespace, remove_stale

#: Logical shards of each case's cluster: enough for two pairs and a split, few enough to
#: make a cluster in seconds (4096 shards take a minute, and nothing here depends on them).
SHARDS = 64
DEFAULT_DIR = ROOT / "var" / "nemesis"


class Nemesis(Drills):
    """A fresh cluster in ``directory`` for one case, the drills' tools on it, and the
    namespaces the case makes (removed, with their rules, however the case ends)."""

    def __init__(self, cluster: Cluster, out: TextIO = sys.stdout) -> None:
        super().__init__(cluster, out)
        self.namespaces: list[Namespace] = []

    @classmethod
    @contextmanager
    def fresh(cls, directory: Path, out: TextIO = sys.stdout) -> Iterator[Nemesis]:
        remove_stale()
        _stop(directory)
        shutil.rmtree(directory, ignore_errors=True)
        log = StringIO()
        began = time.monotonic()
        try:
            # No Prometheus: the cases measure seconds, and count on nothing it would show.
            # One replica per master: each case is a single replica's failure mode.
            cluster = up(directory, shards=SHARDS, seed=False, monitoring=False, backups=False, replicas=1, spares=0, out=log)  # fmt: skip
        except Exception:
            out.write(log.getvalue())
            raise
        nemesis = cls(cluster, out)
        nemesis.say(f"a fresh cluster of {SHARDS} shards up in {time.monotonic() - began:.0f} s")
        try:
            yield nemesis
        finally:
            nemesis.stop_loads()
            nemesis.close()
            _stop(directory)  # while the links run: a server in a namespace is stopped through one
            for namespace in nemesis.namespaces:
                namespace.delete()

    # -- test hosts ----------------------------------------------------------------------------

    def namespace(self, name: str, *, moves: Sequence[str] = ()) -> Namespace:
        """A test host linked to every server of the cluster; those of ``moves`` (halted
        first, then started again inside it) run in it from now on."""
        ports = {n: r["port"] for n, r in self.cluster.state["processes"].items() if r["port"]}
        moved = [ports[name] for name in moves]
        for process in moves:
            self.cluster[process].halt()
        namespace = Namespace(name).create(
            inside=[p for p in ports.values() if p not in moved], outside=moved
        )
        self.namespaces.append(namespace)
        for process in moves:
            namespace.run_in(self.cluster[process])
            self.cluster[process].restart()
            if process in MARIADB:  # a replica's threads do not start with it (skip_slave_start)
                mysql.resume(self.cluster.port(process), self.cluster.secrets["root"])
        return namespace

    def manage_in(self, namespace: Namespace, *args: str, timeout: float = 300) -> Ran:
        """``manage.py ARGS`` run by an operator on the test host ``namespace``."""
        return self.manage(*args, timeout=timeout, wrapper=namespace.command([]))

    # -- the operator killed -------------------------------------------------------------------

    def manage_until_step(self, step: int, *args: str, inside: bool = False, timeout: float = 300) -> Ran:  # fmt: skip
        """``manage.py ARGS``, killed with SIGKILL right after it journals step ``step``
        (it stops itself there: ``SHARDSTORE_STOP_AFTER_STEP``), or with ``inside`` once
        the step has run but before it is journaled (``SHARDSTORE_STOP_IN_STEP``). Exit -9
        if it was killed so; else it ended first (the plan has fewer steps, or it failed
        before)."""
        began = time.monotonic()
        where = "SHARDSTORE_STOP_IN_STEP" if inside else "SHARDSTORE_STOP_AFTER_STEP"
        env = {**self.env, where: str(step)}
        process = subprocess.Popen(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + timeout
        while process.poll() is None and time.monotonic() < deadline:
            if stopped(process.pid):
                process.send_signal(signal.SIGKILL)
                break
            time.sleep(0.02)
        else:
            if process.poll() is None:
                process.kill()
        output, _ = process.communicate()
        return Ran(process.returncode, output, time.monotonic() - began)


class Paused:
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


def _stop(directory: Path) -> None:
    if (directory / "cluster.json").is_file():
        down(directory, out=StringIO())


def writable_within(load: Load, group: str, since: float, bound: float) -> float | None:
    """Keep the load on until ``group``'s shards take a write after ``since``, at most
    ``bound`` s: the seconds that took, or None."""
    deadline = since + bound
    while time.monotonic() < deadline:
        if load.acked_since(since, group):
            first = min(a.at for a in load.acks if a.group == group and a.at >= since)
            return first - since
        time.sleep(0.1)
    return None


def read_only(d: Drills, host: str) -> bool | str:
    try:
        with d.admin(d.topology(), host) as h:
            return h.read_only()
    except HostError as error:
        return str(error)
