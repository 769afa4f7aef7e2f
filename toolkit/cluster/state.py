"""A local cluster as its directory records it: each process's launcher, found again by PID
from ``cluster.json``, its port and address, the environment of a process using the
cluster, ``status`` and ``down``."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from toolkit.cluster import backup_schedule, monitoring, mysql
from toolkit.cluster.files import read_env, read_json, write_json
from toolkit.cluster.plan import (
    BACKUPS,
    DEFAULT_DIR,
    MARIADB,
    MONITORING,
    PROCESSES,
    REPLICAS,
    SERVERS,
    SITE,
    SPARES,
    ZK_ROOT,
    address,
    ranges,
    spare_names,
)
from toolkit.processes import HOST, Launched
from toolkit.servers.base import Server
from toolkit.servers.mariadb import MariaDBServer
from toolkit.servers.memcached import MemcachedServer
from toolkit.servers.redis import RedisServer
from toolkit.servers.zookeeper import ZooKeeperServer
from toolkit.site_processes import ROOT, CeleryWorker, GunicornSite, SiteProcess


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
        self.state: dict[str, Any] = read_json(self.state_path) or {"processes": {}, "done": []}
        self.secrets: dict[str, str] = read_json(self.secrets_path) or {}
        self.processes: dict[str, Launched] = {}
        for name in PROCESSES:
            record = self.state["processes"].get(name)
            if record is not None:
                process = self.build(name)
                if record.get("pid"):
                    process.adopt(record["pid"], record["started"])

    @property
    def names(self) -> list[str]:
        """The processes this cluster runs: every one of ``PROCESSES``, but Prometheus and
        its exporters, or the archiver and the backup schedule, where it was made without
        them, and the MariaDB servers (and their exporters) of replicas it was made without."""
        left_out = set(MARIADB) - set(self.mysql_servers)
        left_out |= set() if self.state.get("monitoring", True) else set(MONITORING)
        left_out |= set() if self.backed_up else set(BACKUPS)
        return [n for n in PROCESSES if left_out.isdisjoint((n, n.removesuffix("-exporter")))]

    @property
    def backed_up(self) -> bool:
        """Whether the cluster runs its archiver and backup schedule, into ``backups/``."""
        return bool(self.state.get("backups", True))

    @property
    def ranges(self) -> dict[str, tuple[str, ...]]:
        """Each master with the replicas it was made with (``plan.ranges``)."""
        return ranges(int(self.state.get("replicas", REPLICAS)))

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """Each (master, replica) of ``ranges``."""
        return [(master, replica) for master, names in self.ranges.items() for replica in names]

    @property
    def mysql_servers(self) -> list[str]:
        """The cluster's MariaDB servers, in ``MARIADB``'s order: its ranges' and its spares'."""
        used = {*self.ranges, *(name for names in self.ranges.values() for name in names)}
        used |= set(spare_names(int(self.state.get("spares", len(SPARES)))))
        return [name for name in MARIADB if name in used]

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
        for name in self.names:
            kind = PROCESSES[name]
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

    def build(self, name: str) -> Launched:
        """The launcher of a process, on its recorded port (0: a free one at its first start)."""
        kind = PROCESSES[name]
        port = self.state["processes"].get(name, {}).get("port", 0)
        home, log = self.directory / name, self.directory / "logs" / f"{name}.log"
        common: dict[str, Any] = {"home": home, "port": port, "log": log, "detached": self.detached}
        process: Launched
        if kind == "zookeeper":
            process = ZooKeeperServer(**common)
        elif kind == "mariadb":
            # A master loads in bulk until its replicas are copies of it.
            replicas = self.ranges.get(name, ())
            bulk = any(f"copied:{replica}" not in self.state["done"] for replica in replicas)
            args = mysql.server_args(MARIADB.index(name) + 1, bulk_load=bulk)
            process = MariaDBServer(args, **common)
        elif kind == "memcached":
            process = MemcachedServer(**common)
        elif name == "redis-replica":
            process = RedisServer(["--replicaof", HOST, str(self.port("redis"))], **common)
        elif kind == "redis":  # the graph's and the broker's: kept on disk
            process = RedisServer(["--appendonly", "yes", "--appendfsync", "everysec"], **common)
        elif name in MONITORING:
            process = monitoring.build(self, name, common)
        elif name == "archiver":
            process = backup_schedule.archiver(self.directory, self.site_env(), log, detached=self.detached)  # fmt: skip
        elif name == "backups":
            process = backup_schedule.schedule(self.topology, self.site_env(), log, detached=self.detached)  # fmt: skip
        elif kind == "celery":
            env = {**self.site_env(), **monitoring.metrics_env(self, name)}
            process = CeleryWorker(env, log, concurrency=2, detached=self.detached)
        else:
            process = GunicornSite(
                {**self.site_env(), **monitoring.metrics_env(self, name)},
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
            "address": address(kind, port),
        }
        self.save()

    def mariadb(self, name: str) -> MariaDBServer:
        """The MariaDB server ``name`` (built if nothing has yet)."""
        process = self.server(name)
        assert isinstance(process, MariaDBServer)
        return process

    def server(self, name: str) -> Server:
        """The data server ``name`` (built if nothing has yet)."""
        process = self.processes.get(name) or self.build(name)
        assert isinstance(process, Server)
        return process

    def running(self, name: str) -> bool:
        """Whether the process ``name`` runs."""
        process = self.processes.get(name)
        return process is not None and process.alive

    # -- the record ------------------------------------------------------------------------

    def save(self) -> None:
        """Write ``cluster.json``."""
        write_json(self.state_path, self.state)

    def mark_done(self, step: str) -> None:
        """Record a setup step as done: no later ``up`` does it again."""
        self.state["done"].append(step)
        self.save()

    # -- down and status -----------------------------------------------------------------

    def down(self, out: TextIO) -> bool:
        """Stop the site's processes, then the servers, each by its own PID; whether all are
        gone."""
        for group in (MONITORING, BACKUPS, SITE, SERVERS):
            running = [n for n in group if self.running(n)]
            with ThreadPoolExecutor(len(running) or 1) as pool:
                for name, pid in zip(running, pool.map(self._halt, running), strict=True):
                    out.write(f"  stopped {name:<14} pid {pid}\n")
        for record in self.state["processes"].values():
            record["pid"] = record["started"] = None
        self.save()
        return not any(self.running(name) for name in PROCESSES)

    def _halt(self, name: str) -> int | None:
        process = self.processes[name]
        pid = process.pid
        process.halt()
        return pid

    def report(self, out: TextIO) -> None:
        """``status`` as a table, then where the site, its console and the env file are."""
        rows = self.status()
        out.write(f"{'NAME':<14} {'KIND':<15} {'PID':<8} {'PORT':<6} {'STATE':<6} ADDRESS\n")
        for row in rows:
            out.write(
                f"{row.name:<14} {row.kind:<15} {row.pid or '-':<8} {row.port or '-':<6}"
                f" {'alive' if row.alive else 'dead':<6} {row.address}\n"
            )
        if "web" in self.state["processes"]:
            out.write(f"\nThe site:   {self.url}\nConsole:    {self.url}ops/")
            operator = self.secrets.get("operator")
            if operator:
                out.write(f"  (staff log-in: operator / {operator}, as first made)")
            out.write(f"\nEnvironment: source {self.env_path}\n")
