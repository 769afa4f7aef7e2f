"""What every drill shares: the cluster it runs against, its figures and bounds, and the
steps drills have in common (the shard map in force, a store on it, ``manage.py`` with the
cluster's environment, the load's pinners, an operator's MySQL connection)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TextIO

from pinboard.catalog import CATALOG
from shardstore import Store, Topology
from shardstore.control import documents
from shardstore.control.config_source import ConfigSource, SourceUnavailable
from shardstore.control.mysql_hosts import HostError, MySQLHost, endpoint
from shardstore.control.sources import open_source
from toolkit.cluster import mysql
from toolkit.cluster.plan import MARIADB
from toolkit.cluster.state import Cluster
from toolkit.load.api import Site
from toolkit.load.pinners import Pinner, ensure_pinners
from toolkit.load.report import LoadReport
from toolkit.load.traffic import Load
from toolkit.processes import Launched
from toolkit.site_processes import ROOT

#: Pinners the load writes for, on every master that takes new pinners.
PINNERS_PER_MASTER = 4
#: How long a load runs before the drill breaks something, and after it has recovered.
WARM_UP = 3.0
SETTLE = 4.0
#: No load runs longer than this, whatever happens to the drill.
LOAD_CAP = 300.0


class DrillError(RuntimeError):
    """A drill could not run (the cluster is not in a state it can start from)."""


@dataclass(frozen=True)
class Bound:
    what: str
    measured: str
    ok: bool


@dataclass
class Result:
    """One drill's figures, in the order measured, and the bounds it checked."""

    name: str
    title: str = ""
    kind: str = "drill"  # or a nemesis "case"
    figures: list[str] = field(default_factory=list)
    bounds: list[Bound] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None  # the drill stopped before it could check every bound

    def figure(self, line: str) -> None:
        self.figures.append(line)

    def bound(self, what: str, ok: bool, measured: object) -> bool:
        self.bounds.append(Bound(what, str(measured), ok))
        return ok

    def load(self, report: LoadReport) -> None:
        self.figures.extend(report.lines())

    @property
    def ok(self) -> bool:
        return self.error is None and all(b.ok for b in self.bounds)

    def failures(self) -> str:
        """The bounds this drill failed, or why it stopped, in a few lines."""
        lines = [f"{self.name}:"]
        lines += [f"  [FAILED] {b.what}: {b.measured}" for b in self.bounds if not b.ok]
        if self.error is not None:
            lines.append(f"  [FAILED] the drill stopped: {self.error}")
        return "\n".join(lines)

    def block(self) -> str:
        verdict = "PASS" if self.ok else "FAIL"
        lines = [f"== {self.kind} {self.name}: {self.title} ({self.seconds:.0f} s) {verdict}"]
        lines += [f"  {line}" for line in self.figures]
        for b in self.bounds:
            lines.append(f"  [{'ok' if b.ok else 'FAILED'}] {b.what}: {b.measured}")
        if self.error is not None:
            lines.append(f"  [FAILED] the drill stopped: {self.error}")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


@dataclass(frozen=True)
class Ran:
    """A command that ran: its exit status, what it printed, how long it took."""

    returncode: int
    output: str
    seconds: float

    def tail(self, lines: int = 15) -> str:
        return "\n".join(self.output.strip().splitlines()[-lines:])


class Drills:
    """The cluster in ``directory`` as drills see it."""

    def __init__(self, cluster: Cluster, out: TextIO = sys.stdout) -> None:
        self.cluster = cluster
        self.out = out
        self.env = cluster.site_env()
        self.site = Site(cluster.url)
        self.dir = cluster.directory / "drills"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._source: ConfigSource | None = None
        self._django = False
        self._loads: list[Load] = []

    def close(self) -> None:
        self.site.close()
        if self._source is not None:
            self._source.close()
            self._source = None

    def say(self, line: str) -> None:
        """Progress, as the drill goes (its figures come at the end, in one block)."""
        self.out.write(f"   {time.strftime('%H:%M:%S')} {line}\n")
        self.out.flush()

    # -- the cluster's config -------------------------------------------------------------

    @property
    def source(self) -> ConfigSource:
        if self._source is None:
            self._source = open_source(self.env["PINBOARD_TOPOLOGY"])
        return self._source

    def topology(self) -> Topology:
        """The shard map in force; the source is opened again once if it cannot answer (a
        long ZooKeeper outage can leave a client closed for good)."""
        try:
            return Topology.from_json(self.source.current(documents.SHARDS).document)
        except SourceUnavailable:
            self.source.close()
            self._source = None
        return Topology.from_json(self.source.current(documents.SHARDS).document)

    def document(self, name: str) -> dict[str, object]:
        return dict(self.source.current(name).document)

    @contextmanager
    def store(self, topology: Topology | None = None) -> Iterator[Store]:
        """A store on ``topology`` (the map in force by default), no cache in between."""
        login = {"mysql_login": self.env["PINBOARD_MYSQL_LOGIN"]}  # the map holds no password
        store = Store(topology or self.topology(), catalog=CATALOG, backend_options=login)
        try:
            yield store
        finally:
            store.close()

    def process(self, name: str) -> Launched:
        """The cluster's process ``name``, which a drill breaks: it must be running."""
        try:
            process = self.cluster[name]
        except KeyError:
            raise DrillError(f"the cluster has no process {name!r}") from None
        if not process.alive:
            raise DrillError(f"{name} is not running")
        return process

    def admin(self, topology: Topology, host: str) -> MySQLHost:
        """An operator's connection to ``host`` (``PINBOARD_MYSQL_ADMIN``)."""
        user, _, password = self.env["PINBOARD_MYSQL_ADMIN"].partition(":")
        return MySQLHost(topology.hosts[host], user=user, password=password, timeout=10)

    def manage(self, *args: str, timeout: float = 300, wrapper: Sequence[str] = ()) -> Ran:
        """``manage.py ARGS`` with the cluster's environment, as an operator runs it (under
        ``wrapper``: on one of the nemesis's test hosts)."""
        began = time.monotonic()
        try:
            done = subprocess.run(
                [*wrapper, sys.executable, "manage.py", *args], cwd=ROOT, env=self.env,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired as expired:
            output = expired.output if isinstance(expired.output, str) else ""
            return Ran(-1, f"{output}\n(timed out after {timeout:g} s)", time.monotonic() - began)
        return Ran(done.returncode, done.stdout, time.monotonic() - began)

    def guards(self, count: int, *options: str, env: Mapping[str, str] | None = None) -> AbstractContextManager[list[subprocess.Popen[bytes]]]:  # fmt: skip
        """``count`` guards (``guard run``; ``env`` added to theirs) while the block runs."""
        guards = {f"guard-{n}": ("shardstore", "guard", "run", "--instance", f"drill-guard-{n}", *options) for n in range(1, count + 1)}  # fmt: skip
        return self.running(guards, env=env)

    @contextmanager
    def running(self, commands: Mapping[str, Sequence[str]], env: Mapping[str, str] | None = None) -> Iterator[list[subprocess.Popen[bytes]]]:  # fmt: skip
        """Each ``manage.py`` command (its log's name: its arguments) while the block runs,
        logging to ``NAME.log``, with the cluster's environment and ``env``."""
        logs = [open(self.dir / f"{name}.log", "wb") for name in commands]  # noqa: SIM115 - closed below
        environment = {**self.env, **(env or {})}
        started = [self._manage_in_background(args, environment, log) for args, log in zip(commands.values(), logs, strict=True)]  # fmt: skip
        try:
            yield started
        finally:
            for process in started:
                process.terminate()
            for process, log in zip(started, logs, strict=True):
                with suppress(subprocess.TimeoutExpired):
                    process.wait(10)
                process.kill()  # (nothing, if it has ended)
                process.wait()
                log.close()

    @staticmethod
    def _manage_in_background(args: Sequence[str], env: Mapping[str, str], log: BinaryIO) -> subprocess.Popen[bytes]:  # fmt: skip
        return subprocess.Popen([sys.executable, "manage.py", *args], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip

    def django(self) -> None:
        """Set this process up as one of the site's (for drills that use the site's code
        in-process): the cluster's environment, then ``django.setup()``."""
        if self._django:
            return
        os.environ.update({k: v for k, v in self.env.items() if k.startswith(("PINBOARD_", "DJANGO_"))})  # fmt: skip
        if str(ROOT) not in sys.path:
            sys.path.insert(0, str(ROOT))
        importlib.import_module("django").setup()
        self._django = True

    # -- the load -------------------------------------------------------------------------------

    def pinners(self, topology: Topology) -> list[Pinner]:
        return ensure_pinners(
            self.site, self.dir / "pinners.json", topology, per_group=PINNERS_PER_MASTER
        )

    def load(self, topology: Topology) -> Load:
        """A load over the drills' pinners, started (``finish`` stops it; so does
        ``stop_loads`` after a drill that did not get that far)."""
        pinners = self.pinners(topology)
        return self.track(Load(self.site, pinners, topology, max_seconds=LOAD_CAP)).start()

    def track(self, load: Load) -> Load:
        """A load to stop after the drill, however the drill ends."""
        self._loads.append(load)
        return load

    def stop_loads(self) -> None:
        for load in self._loads:
            load.stop()
        self._loads.clear()

    def restore(self) -> list[str]:
        """Start again any process of the cluster that is not running (a drill that stopped
        half-way may leave one down), a replica's replication too (its threads do not start
        with it: ``toolkit.cluster.mysql``); what was restarted."""
        restarted = []
        for row in self.cluster.status():
            if not row.alive:
                self.say(f"restart {row.name}")
                self.cluster[row.name].restart()
                restarted.append(row.name)
        for name in restarted:  # once its master may be back as well
            if name in MARIADB:
                mysql.resume(self.cluster.port(name), self.cluster.secrets["root"])
        return restarted

    def finish(self, result: Result, load: Load) -> LoadReport:
        """Stop ``load``, read back every acknowledged write on the map in force, add the
        figures and the bounds: no acknowledged write lost, no request answered with a
        crash page (a refusal is a 503 with Retry-After)."""
        load.stop()
        with self.store() as store:
            report = load.verify(store)
        result.load(report)
        result.bound(
            "acknowledged writes lost", report.lost == 0, f"{report.lost} of {report.acked}"
        )
        crashed = sum(
            count
            for group in report.groups.values()
            for status, count in group.tally.statuses.items()
            if status >= 500 and status != 503
        )
        result.bound("requests answered with a crash page (a 5xx but 503)", crashed == 0, crashed)
        return report


def replica_in_service(topology: Topology, master: str) -> str | None:
    """The first replica every range of ``master`` names that is in service."""
    named = {r.replicas for r in topology.ranges if r.master == master}
    if len(named) != 1:
        return None
    return next((r for r in named.pop() if r not in topology.out_of_service), None)


def masters_with_replicas(topology: Topology) -> list[tuple[str, str]]:
    masters = sorted({r.master for r in topology.ranges})
    return [(m, r) for m in masters if (r := replica_in_service(topology, m)) is not None]


def healthy_pair(d: Drills, topology: Topology, *, prefer_last: bool = False) -> tuple[str, str]:
    """A master (the first by name, or the last) and its replica in service, replicating
    from it without error: what a failover or a split needs."""
    pairs = masters_with_replicas(topology)
    healthy = []
    for master, replica in pairs:
        try:
            with d.admin(topology, replica) as r:
                status = r.replica_status()
        except HostError:
            continue
        source = "{}:{}".format(*endpoint(topology.hosts[master]))
        if status is not None and status.healthy and status.source == source:
            healthy.append((master, replica))
    if not healthy:
        raise DrillError(
            "no master has a healthy replica in service (each emergency or split drill leaves"
            " one pair without its replica; start a fresh cluster: make cluster-stop,"
            " delete var/cluster, make cluster)"
        )
    return healthy[-1] if prefer_last else healthy[0]


def wait_lost(d: Drills, topology: Topology, replica: str, timeout: float = 15) -> str:
    """Wait until ``replica``'s I/O thread has lost its source (a master just killed: until
    then an emergency failover rightly refuses); its state then."""
    deadline = time.monotonic() + timeout
    state = "?"
    while time.monotonic() < deadline:
        try:
            with d.admin(topology, replica) as r:
                status = r.replica_status()
        except HostError as error:
            state = str(error)
        else:
            state = f"I/O {status.io_state}, errno {status.io_errno}" if status else "none"
            if status is not None and status.lost_source:
                return state
        time.sleep(0.2)
    raise DrillError(f"{replica} did not lose its source in {timeout:g} s: {state}")


def shards_of(topology: Topology, host: str) -> str:
    return ", ".join(f"{r.first}..{r.last}" for r in topology.ranges if r.master == host)


def project_path(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def run_reported(
    names: Iterable[str],
    run: Callable[[str, Result], None],
    *,
    kind: str = "drill",
    after: Callable[[Result], None] | None = None,
) -> int:
    """Run each of ``names`` (``run(name, result)``), print each one's block as it ends and
    what failed at the end; 1 if any failed, else 0. One that raises is reported, and the
    next runs."""
    results: list[Result] = []
    for name in names:
        result = Result(name, kind=kind)
        print(f"-- {name}", flush=True)
        began = time.monotonic()
        try:
            run(name, result)
        except DrillError as error:
            result.error = str(error)
        except Exception as error:  # noqa: BLE001 - reported, and the next one runs
            frame = traceback.extract_tb(error.__traceback__)[-1]
            where = f"{Path(frame.filename).name}:{frame.lineno}"
            result.error = f"{type(error).__name__}: {error} (at {where})"
            traceback.print_exc()
        if after is not None:
            after(result)
        result.seconds = time.monotonic() - began
        results.append(result)
        print(result.block(), flush=True)
    failed = [r for r in results if not r.ok]
    print(
        f"\n{len(results) - len(failed)} of {len(results)} {kind}s passed"
        + (f"; failed: {', '.join(r.name for r in failed)}" if failed else "")
    )
    # Again at the end, where a log's tail shows it: what failed, one by one.
    for result in failed:
        print(result.failures())
    return 1 if failed else 0
