"""The local cluster: the production shape on one machine, on loopback, up with one command.

    python -m toolkit.cluster up [--dir var/cluster]   # make cluster
    python -m toolkit.cluster status                   # make cluster-status
    python -m toolkit.cluster down                     # make cluster-stop

What runs, each on a loopback port chosen free at the first ``up`` and kept after it:

* ZooKeeper, holding the config documents (``shards``, ``redis``, ``caches``) under
  ``/pinboard``;
* four MariaDB servers: ``db1a``, master of shards 0-2047, replicated to ``db1b``, and
  ``db2a``, master of 2048-4095, replicated to ``db2b`` (GTID, semi-synchronous; every
  server starts read-only and only the masters the shard map names are made writable:
  toolkit/cluster_mysql.py);
* Redis for the follower graph and home feeds, with a replica; a second Redis as the
  Celery broker, so a drill that kills and wipes the first leaves the queue alone;
* two memcached servers, each cache pool on both;
* a Celery worker (two processes) and the site under gunicorn (two workers, four threads).

Everything lives in the cluster's directory: a directory per server (its data), ``logs/``,
``site/`` (the site's ``PINBOARD_VAR_DIR``: control database, config mirror, media),
``secrets.json`` (passwords made at the first ``up``, mode 0600), ``env`` (``export
NAME=value`` lines: all a process needs to use the cluster; ``source`` it) and
``cluster.json`` (each process's PID and start time, port, data, log and address).

``up`` is idempotent: what runs is left alone, a process that died is started again on
its port with its data, and each setup step is done once. ``down`` signals exactly the
processes ``cluster.json`` names, each only while its PID still belongs to the process
that was started (same start time, same program on its command line); never by name.

Drills use the same objects::

    cluster = Cluster.load(Path("var/cluster"))
    cluster["db1a"].halt(kill=True)   # a crash
    cluster["db1a"].restart()         # same port, same data; read-only until made master
    env = cluster.env()               # the environment of a process using the cluster
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from shardstore.control import documents
from shardstore.control.mysql_hosts import endpoint
from shardstore.control.sources import NotPublished, open_source
from shardstore.redis_shards import VSHARDS
from toolkit import cluster_mysql
from toolkit.servers import (
    HOST,
    Launched,
    MariaDBServer,
    MemcachedServer,
    Pid,
    RedisServer,
    Server,
    ZooKeeperServer,
)
from toolkit.site_processes import ROOT, CeleryWorker, GunicornSite, SiteProcess

DEFAULT_DIR = ROOT / "var" / "cluster"
ZK_ROOT = "/pinboard"
SHARDS = 4096
#: Seconds before the broker hands a dead worker's tasks to another (see ``_make_env``).
BROKER_VISIBILITY_TIMEOUT = 60

#: Every process, by name, with its kind, in the order ``up`` starts them.
PROCESSES: dict[str, str] = {
    "zookeeper": "zookeeper",
    "db1a": "mariadb",
    "db1b": "mariadb",
    "db2a": "mariadb",
    "db2b": "mariadb",
    "redis": "redis",
    "redis-replica": "redis",
    "broker": "redis",
    "memcached1": "memcached",
    "memcached2": "memcached",
    "worker": "celery",
    "web": "gunicorn",
}
MARIADB = ("db1a", "db1b", "db2a", "db2b")
#: Each master with the replica that follows it when the cluster is made.
PAIRS = (("db1a", "db1b"), ("db2a", "db2b"))
SITE = ("worker", "web")
SERVERS = tuple(name for name in PROCESSES if name not in SITE)


@dataclass(frozen=True)
class Row:
    """One line of ``status``."""

    name: str
    kind: str
    pid: int | None
    port: int | None
    alive: bool
    address: str


class Cluster:
    """A local cluster's directory and its processes (``cluster["db1a"]``), found again from
    ``cluster.json``; processes it starts are detached unless ``detached=False`` (tests:
    then they die with the process that started them)."""

    def __init__(self, directory: Path, *, detached: bool = True) -> None:
        self.directory = Path(directory).resolve()
        self.detached = detached
        self.state: dict[str, Any] = _read_json(self.state_path) or {"processes": {}, "done": []}
        self.secrets: dict[str, str] = _read_json(self.secrets_path) or {}
        self.processes: dict[str, Launched] = {}
        #: What the last ``up`` started, and which of those it has made writable masters.
        self.started: list[str] = []
        self._opened: set[str] = set()
        for name in PROCESSES:
            record = self.state["processes"].get(name)
            if record is not None:
                process = self._build(name)
                if record.get("pid"):
                    process.adopt(record["pid"], record["started"])

    @classmethod
    def load(cls, directory: Path = DEFAULT_DIR, *, detached: bool = True) -> Cluster:
        """The cluster made in ``directory`` (FileNotFoundError if there is none)."""
        if not (Path(directory) / "cluster.json").is_file():
            raise FileNotFoundError(f"no cluster in {directory}: run `make cluster`")
        return cls(directory, detached=detached)

    # -- where things are ------------------------------------------------------------

    @property
    def state_path(self) -> Path:
        return self.directory / "cluster.json"

    @property
    def secrets_path(self) -> Path:
        return self.directory / "secrets.json"

    @property
    def env_path(self) -> Path:
        return self.directory / "env"

    def __getitem__(self, name: str) -> Launched:
        return self.processes[name]

    def port(self, name: str) -> int:
        port: int = self.state["processes"][name]["port"]
        return port

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port('web')}/"

    @property
    def topology(self) -> str:
        """The config source, as ``PINBOARD_TOPOLOGY`` names it."""
        return f"zk://{HOST}:{self.port('zookeeper')}{ZK_ROOT}"

    def env(self) -> dict[str, str]:
        """The variables of ``env``: what a process needs to use the cluster."""
        return read_env(self.env_path)

    def site_env(self) -> dict[str, str]:
        """This process's environment with the cluster's in place of any other deployment's."""
        own = {k: v for k, v in os.environ.items() if not k.startswith(("PINBOARD_", "DJANGO_"))}
        return {**own, **self.env()}

    def status(self) -> list[Row]:
        rows = []
        for name, kind in PROCESSES.items():
            record = self.state["processes"].get(name, {})
            process = self.processes.get(name)
            alive = process is not None and process.alive
            rows.append(
                Row(
                    name,
                    kind,
                    process.pid if process is not None and alive else None,
                    record.get("port"),
                    alive,
                    record.get("address", ""),
                )
            )
        return rows

    # -- the processes -----------------------------------------------------------------

    def _build(self, name: str) -> Launched:
        """The launcher of a process, on its recorded port (0: a free one at its first start)."""
        kind = PROCESSES[name]
        port = self.state["processes"].get(name, {}).get("port", 0)
        home, log = self.directory / name, self.directory / "logs" / f"{name}.log"
        common: dict[str, Any] = {"home": home, "port": port, "log": log, "detached": self.detached}
        process: Launched
        if kind == "zookeeper":
            process = ZooKeeperServer(**common)
        elif kind == "mariadb":
            replica = dict(PAIRS).get(name)  # a master loads in bulk until its replica is a copy
            bulk = replica is not None and f"copied:{replica}" not in self.state["done"]
            args = cluster_mysql.server_args(MARIADB.index(name) + 1, bulk_load=bulk)
            process = MariaDBServer(args, **common)
        elif kind == "memcached":
            process = MemcachedServer(**common)
        elif name == "redis-replica":
            process = RedisServer(["--replicaof", HOST, str(self.port("redis"))], **common)
        elif kind == "redis":  # the graph's and the broker's: kept on disk
            process = RedisServer(["--appendonly", "yes", "--appendfsync", "everysec"], **common)
        elif kind == "celery":
            process = CeleryWorker(self.site_env(), log, concurrency=2, detached=self.detached)
        else:
            process = GunicornSite(
                self.site_env(),
                log,
                workers=2,
                threads=4,
                port=port,
                app="toolkit.site_wsgi",
                extra_args=("--log-level", "info"),
                detached=self.detached,
            )
        process.on_launch = lambda: self._record(name)
        self.processes[name] = process
        return process

    def _record(self, name: str) -> None:
        process = self.processes[name]
        kind = PROCESSES[name]
        port: int | None
        if isinstance(process, Server):
            port, home, log = process.port, process.home, process.log_path
        else:
            assert isinstance(process, SiteProcess)
            port = process.port if isinstance(process, GunicornSite) else None
            home, log = ROOT, process.log
        running = process.running
        self.state["processes"][name] = {
            "name": name,
            "kind": kind,
            "pid": running.pid if running else None,
            "started": running.started if running else None,
            "port": port,
            "home": str(home),
            "log": str(log),
            "address": _address(kind, port),
        }
        self._save()

    def _start(self, name: str, out: TextIO) -> None:
        """Start a process that is not running, on its recorded port and data."""
        record = self.state["processes"].get(name)
        if record is not None and record.get("pid"):
            # A process that died may still be letting go of its port.
            Pid(record["pid"], record["started"]).wait_exited(15)
        process = self.processes.get(name)
        if process is None or name in SITE:
            process = self._build(name)  # the site's processes take the env file as it is now
        began = time.monotonic()
        if isinstance(process, Server):
            process.start()
        else:
            assert isinstance(process, SiteProcess)
            process.start().wait_ready(timeout=120)
        self.started.append(name)
        self._opened.discard(name)  # back read-only: made writable again if it is a master
        out.write(
            f"  started {name:<14} pid {process.pid!s:<8} port {self.port(name) or '-'!s:<6}"
            f" ({time.monotonic() - began:.1f}s)\n"
        )
        out.flush()

    def _mariadb(self, name: str) -> MariaDBServer:
        process = self._server(name)
        assert isinstance(process, MariaDBServer)
        return process

    def _server(self, name: str) -> Server:
        process = self.processes.get(name) or self._build(name)
        assert isinstance(process, Server)
        return process

    def _alive(self, name: str) -> bool:
        process = self.processes.get(name)
        return process is not None and process.alive

    # -- state and secrets -----------------------------------------------------------

    def _save(self) -> None:
        _write_json(self.state_path, self.state)

    def _mark(self, step: str) -> None:
        self.state["done"].append(step)
        self._save()

    def _ensure_secrets(self) -> None:
        if self.secrets:
            return
        if self.state["processes"]:
            raise RuntimeError(f"{self.secrets_path} is missing: the cluster's passwords are lost")
        self.secrets = {
            "root": secrets.token_hex(16),
            "replication": secrets.token_hex(16),
            "pinboard": secrets.token_hex(16),
            "secret_key": secrets.token_urlsafe(48),
        }
        _write_json(self.secrets_path, self.secrets, private=True)

    def _make_env(self) -> dict[str, str]:
        memcached = ",".join(f"{HOST}:{self.port(n)}" for n in ("memcached1", "memcached2"))
        return {
            "DJANGO_SETTINGS_MODULE": "pinboard.settings.dev",
            "PINBOARD_TOPOLOGY": self.topology,
            "PINBOARD_MEMCACHED": memcached,
            "PINBOARD_REDIS_URL": f"redis://{HOST}:{self.port('redis')}/0",
            "PINBOARD_BROKER_URL": f"redis://{HOST}:{self.port('broker')}/0",
            "PINBOARD_VAR_DIR": str(self.directory / "site"),
            "PINBOARD_ALLOWED_HOSTS": f"{HOST},localhost",
            "PINBOARD_SECRET_KEY": self.secrets["secret_key"],
            "PINBOARD_MYSQL_ADMIN": f"root:{self.secrets['root']}",
            # A task whose worker died unannounced is queued again this long after it was
            # taken (pinboard/settings/base.py), not after production's 20 minutes, so the
            # Celery drill can wait for it. A task held longer than this (a retry's
            # countdown) may run twice meanwhile: fan-out batches and job chunks are
            # idempotent.
            "PINBOARD_BROKER_VISIBILITY_TIMEOUT": str(BROKER_VISIBILITY_TIMEOUT),
        }

    def _write_env(self, out: TextIO) -> None:
        text = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in self._make_env().items())
        text = "# The local cluster's environment: `source` it (toolkit/cluster.py).\n" + text
        if self.env_path.exists() and self.env_path.read_text() == text:
            return
        if self.env_path.exists() and any(self._alive(name) for name in SITE):
            out.write(f"  {self.env_path} changed: the worker and the site take it when restarted\n")  # fmt: skip
        _write_text(self.env_path, text, private=True)

    # -- up ------------------------------------------------------------------------------

    def up(self, *, shards: int | None, seed: bool, out: TextIO) -> None:
        began = time.monotonic()
        recorded = self.state.get("shards")
        if shards is not None and recorded is not None and shards != recorded:
            raise RuntimeError(
                f"the cluster in {self.directory} has {recorded} shards; to start over with"
                f" {shards}, run `down` and delete the directory"
            )
        self.state.setdefault("shards", shards or SHARDS)
        self.state.setdefault("seed", seed)
        self._ensure_secrets()
        self.started, self._opened = [], set()

        # MariaDB's data directories are made in parallel: the slow part of a first start.
        fresh = [self._server(n) for n in MARIADB if not self._alive(n)]
        with ThreadPoolExecutor(len(fresh) or 1) as pool:
            list(pool.map(Server.prepare, fresh))
        for name in SERVERS:
            if not self._alive(name):
                self._start(name, out)

        for name in MARIADB:
            self._once(f"users:{name}", cluster_mysql.create_users, self.port(name), self.secrets)
        self._once("documents", self._publish, out)
        self._open_masters(out)  # those this run started: every server starts read-only
        self._write_env(out)
        self._once("schema", self._make_schema, out)
        self._make_replicas(out)
        self._open_masters(out)
        self._once("site", self._make_site, out)
        for name in SITE:
            if not self._alive(name):
                self._start(name, out)

        if self.started:
            took = time.monotonic() - began
            out.write(f"Started {len(self.started)} processes; up in {took:.1f}s.\n")
        else:
            out.write("Everything runs; nothing changed.\n")
        self.report(out)

    def _once(self, step: str, do: Callable[..., object], *args: Any) -> None:
        """Run a setup step unless a former ``up`` has done it."""
        if step not in self.state["done"]:
            do(*args)
            self._mark(step)

    def _make_schema(self, out: TextIO) -> None:
        """The control database, the first operator and every shard's tables (on the masters,
        loading in bulk: see ``_make_replicas``)."""
        timings = []
        for args in (("migrate", "--verbosity", "0"), ("ensure_operator",), ("shardstore", "init")):
            began = time.monotonic()
            output = self._manage(*args, capture=args[0] == "ensure_operator")
            timings.append(
                f"{args[-1] if args[0] == 'shardstore' else args[0]} {time.monotonic() - began:.1f}s"
            )
            password = re.search(r"password: (\S+)", output)
            if password:
                self.secrets["operator"] = password.group(1)
                _write_json(self.secrets_path, self.secrets, private=True)
        out.write(f"  schema made: {', '.join(timings)}\n")

    def _make_replicas(self, out: TextIO) -> None:
        """Each replica starts as a copy of its master, then follows it.

        Replaying the creation of every shard's tables on a replica would take minutes
        (each CREATE TABLE syncs MariaDB's DDL log several times, and a replica applies them
        one by one), so the masters make them in a bulk load, with neither binary log nor
        syncs (``cluster_mysql.server_args``), and each replica gets a cold copy of its
        master's data directory. Both then run with their binary logs, and the replica
        follows the master from the first transaction of its log (GTID): the demo data and
        everything after replicate as in production.
        """
        pending = [(m, r) for m, r in PAIRS if f"replication:{r}" not in self.state["done"]]
        to_copy = [(m, r) for m, r in pending if f"copied:{r}" not in self.state["done"]]
        if to_copy:
            began = time.monotonic()
            servers = [self._server(n) for pair in to_copy for n in pair]
            with ThreadPoolExecutor(len(servers)) as pool:
                list(pool.map(lambda server: server.halt(), servers))
            halted = time.monotonic()
            with ThreadPoolExecutor(len(to_copy)) as pool:
                list(pool.map(lambda pair: self._copy(*pair), to_copy))
            copied = time.monotonic()
            os.sync()  # the bulk load and the copies, on disk before anything depends on them
            for master, replica in to_copy:
                self._mark(f"copied:{replica}")
                self._build(master)  # from now on with its binary log
            out.write(
                f"  replicas copied from their masters: stop {halted - began:.1f}s,"
                f" copy {copied - halted:.1f}s, sync {time.monotonic() - copied:.1f}s\n"
            )
        for name in MARIADB:
            if not self._alive(name):
                self._start(name, out)
        for master, replica in pending:
            cluster_mysql.follow(self.port(replica), self.port(master), self.secrets)
            self._mark(f"replication:{replica}")
            out.write(f"  {replica} follows {master} (GTID, semi-sync)\n")

    def _copy(self, master: str, replica: str) -> None:
        source, target = self._mariadb(master).datadir, self._mariadb(replica).datadir
        shutil.rmtree(target, ignore_errors=True)
        # cp is five times faster than shutil.copytree over the 50,000 files of 2,048 shards.
        subprocess.run(["cp", "-a", str(source), str(target)], check=True)
        for pattern in _NOT_COPIED:
            for path in target.glob(pattern):
                path.unlink()

    def _make_site(self, out: TextIO) -> None:
        """The worker, the demo data (through the site's own code), and the replicas caught
        up with it."""
        timings = []
        if not self._alive("worker"):
            self._start("worker", out)
        if self.state["seed"]:
            began = time.monotonic()
            self._manage("seed_demo", "--if-empty")
            timings.append(f"seed_demo {time.monotonic() - began:.1f}s")
        began = time.monotonic()
        for master, replica in PAIRS:
            cluster_mysql.wait_caught_up(
                self.port(master), self.port(replica), self.secrets["root"], timeout=600
            )
        timings.append(f"replicas caught up {time.monotonic() - began:.1f}s")
        out.write(f"  site ready: {', '.join(timings)}\n")

    def _publish(self, out: TextIO) -> None:
        """The config documents, each published once (a later ``up`` keeps what operators
        have published since)."""
        shards = self.state["shards"]
        half = shards // 2
        app = f"{cluster_mysql.APP_USER}:{self.secrets['pinboard']}"
        document = {
            "shards": {
                "version": 0,
                "shard_count": shards,
                "lookup_shards": shards,
                "hosts": {n: f"mysql://{app}@{HOST}:{self.port(n)}" for n in MARIADB},
                "ranges": [
                    {"range": [0, half - 1], "master": "db1a", "slave": "db1b"},
                    {"range": [half, shards - 1], "master": "db2a", "slave": "db2b"},
                ],
                "open": [[0, shards - 1]],
            },
            "redis": {
                "version": 0,
                "instances": {"redis1": f"redis://{HOST}:{self.port('redis')}/0"},
                "ranges": [{"range": [0, VSHARDS - 1], "instance": "redis1"}],
            },
            "caches": {
                "version": 0,
                "pools": {
                    pool: [f"{HOST}:{self.port(n)}" for n in ("memcached1", "memcached2")]
                    for pool in documents.CACHE_POOLS
                },
            },
        }
        source = open_source(self.topology)
        try:
            for name in documents.NAMES:
                try:
                    source.current(name)
                except NotPublished:
                    source.publish(
                        name, document[name], author="cluster", reason="the local cluster"
                    )
                    out.write(f"  published {name} to {self.topology}\n")
        finally:
            source.close()

    def _open_masters(self, out: TextIO) -> None:
        """Clear ``read_only`` on the servers this ``up`` started that the shard map in force
        names as masters. Every server starts read-only, so a master that crashed and came
        back stays fenced once another has taken its shards; a server left running is left
        as it is (an operation may have made it read-only on purpose)."""
        started = {n for n in self.started if n in MARIADB} - self._opened
        if not started:
            return
        self._opened |= started
        source = open_source(self.topology)
        try:
            shard_map = source.current(documents.SHARDS).document
        finally:
            source.close()
        ours = {self.port(n): n for n in MARIADB}
        for entry in shard_map["ranges"]:
            port = endpoint(shard_map["hosts"][entry["master"]])[1]
            name = ours.get(port)
            has_replica = entry.get("slave") is not None
            if name in started and cluster_mysql.set_writable(
                port, self.secrets["root"], semi_sync=has_replica
            ):
                first, last = entry["range"]
                out.write(f"  {name} writable: master of shards {first}-{last}\n")

    def _manage(self, *args: str, capture: bool = False) -> str:
        """``manage.py ARGS`` with the cluster's environment; its output shown as it comes
        (or returned, with ``capture``)."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.site_env(),
            stdout=subprocess.PIPE if capture else None,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} exited with {done.returncode}")
        return done.stdout or ""

    # -- down and status -----------------------------------------------------------------

    def down(self, out: TextIO) -> bool:
        """Stop the site's processes, then the servers, each by its own PID; whether all are
        gone."""
        for group in (SITE, SERVERS):
            running = [n for n in group if self._alive(n)]
            with ThreadPoolExecutor(len(running) or 1) as pool:
                for name, pid in zip(running, pool.map(self._halt, running), strict=True):
                    out.write(f"  stopped {name:<14} pid {pid}\n")
        for record in self.state["processes"].values():
            record["pid"] = record["started"] = None
        self._save()
        return not any(self._alive(name) for name in PROCESSES)

    def _halt(self, name: str) -> int | None:
        process = self.processes[name]
        pid = process.pid
        process.halt()
        return pid

    def report(self, out: TextIO) -> None:
        rows = self.status()
        out.write(f"{'NAME':<14} {'KIND':<10} {'PID':<8} {'PORT':<6} {'STATE':<6} ADDRESS\n")
        for row in rows:
            out.write(
                f"{row.name:<14} {row.kind:<10} {row.pid or '-':<8} {row.port or '-':<6}"
                f" {'alive' if row.alive else 'dead':<6} {row.address}\n"
            )
        if "web" in self.state["processes"]:
            out.write(f"\nThe site:   {self.url}\nConsole:    {self.url}ops/")
            operator = self.secrets.get("operator")
            if operator:
                out.write(f"  (staff log-in: operator / {operator}, as first made)")
            out.write(f"\nEnvironment: source {self.env_path}\n")


# -- the commands ------------------------------------------------------------------------


def up(
    directory: Path = DEFAULT_DIR,
    *,
    shards: int | None = None,
    seed: bool = True,
    detached: bool = True,
    out: TextIO = sys.stdout,
) -> Cluster:
    """Start what is not running, set up what is not set up; the cluster."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    with _locked(directory):
        cluster = Cluster(directory, detached=detached)
        cluster.up(shards=shards, seed=seed, out=out)
        return cluster


def down(directory: Path = DEFAULT_DIR, *, out: TextIO = sys.stdout) -> bool:
    """Stop every process the cluster started; whether all are gone."""
    with _locked(Path(directory)):
        return Cluster.load(directory).down(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.cluster", description=__doc__.split("\n")[0])  # fmt: skip
    parser.add_argument("command", choices=("up", "down", "status"))
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="default: var/cluster")
    parser.add_argument(
        "--shards", type=int, default=None, help=f"shards of a new cluster (default {SHARDS})"
    )
    parser.add_argument("--no-seed", action="store_true", help="no demo pinners")
    args = parser.parse_args(argv)
    if args.command == "up":
        up(args.dir, shards=args.shards, seed=not args.no_seed)
        return 0
    if not (args.dir / "cluster.json").is_file():
        print(f"no cluster in {args.dir}")
        return 1 if args.command == "status" else 0
    if args.command == "down":
        return 0 if down(args.dir) else 1
    cluster = Cluster.load(args.dir)
    cluster.report(sys.stdout)
    return 0 if all(row.alive for row in cluster.status()) else 1


# -- helpers -----------------------------------------------------------------------------

#: What a replica's copy of its master's data directory leaves out: the master's own binary
#: log and any replication state (the replica has its own).
_NOT_COPIED = ("mysql-bin.*", "relay-bin.*", "master.info", "relay-log.info")


def read_env(path: Path) -> dict[str, str]:
    """The ``export NAME=value`` lines of an env file, as a dict."""
    env = {}
    for line in path.read_text().splitlines():
        if line.startswith("export "):
            name, _, value = shlex.split(line[len("export ") :])[0].partition("=")
            env[name] = value
    return env


def _address(kind: str, port: int | None) -> str:
    if kind == "mariadb":
        return f"mysql://{HOST}:{port}"
    if kind == "redis":
        return f"redis://{HOST}:{port}/0"
    if kind == "gunicorn":
        return f"http://{HOST}:{port}/"
    if kind == "celery":
        return "the broker"
    return f"{HOST}:{port}"


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text()) if path.exists() else None


def _write_json(path: Path, data: Any, *, private: bool = False) -> None:
    _write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n", private=private)


def _write_text(path: Path, text: str, *, private: bool = False) -> None:
    """Write whole or not at all (a temporary file renamed over), mode 0600 if ``private``."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "w") as file:
        file.write(text)
    os.replace(temporary, path)


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """One ``up`` or ``down`` at a time per cluster."""
    with open(directory / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


if __name__ == "__main__":
    sys.exit(main())
