"""``up``: start what is not running, set up what is not set up.

Each setup step runs once in a cluster's life (``cluster.json`` records the done ones):
the passwords, the MariaDB users, the config documents, the env file, the schema, the
replicas (a copy of their master, then replication) and the site's first data. Processes
are started on their recorded ports and data, every MariaDB server this ``up`` started
is made writable if the shard map in force names it master, and ``up`` returns once every
replica's threads run (``replication``) and the backup schedule's first pass is done."""

from __future__ import annotations

import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TextIO

from pinboard.catalog import CACHE_POOLS
from shardstore.control import documents
from shardstore.control.config_source import NotPublished
from shardstore.control.mysql_hosts import endpoint
from shardstore.control.sources import open_source
from shardstore.redis_shards import VSHARDS
from shardstore.replicas import replicas_of
from toolkit.cluster import migrate, monitoring, mysql, replication
from toolkit.cluster.files import write_json, write_text
from toolkit.cluster.plan import (
    BACKUPS,
    BROKER_VISIBILITY_TIMEOUT,
    MONITORING,
    REPLICAS,
    SERVERS,
    SHARDS,
    SITE,
    SPARES,
    spare_names,
)
from toolkit.cluster.state import Cluster
from toolkit.processes import HOST, Pid
from toolkit.servers.base import Server
from toolkit.site_processes import LOOPBACK_LOAD_LIMITS, ROOT, SiteProcess

#: What a replica's copy of its master's data directory leaves out: the master's own binary
#: log and any replication state (the replica has its own).
_NOT_COPIED = ("mysql-bin.*", "relay-bin.*", "master.info", "relay-log.info")


class BringUp:
    """One ``up`` of ``cluster``, its progress written to ``out``."""

    def __init__(self, cluster: Cluster, out: TextIO) -> None:
        self.cluster = cluster
        self.out = out
        #: What this ``up`` started, and which of those it has made writable masters.
        self.started: list[str] = []
        self._opened: set[str] = set()

    def run(self, *, shards: int | None, seed: bool, monitoring: bool = True, backups: bool = True, replicas: int = REPLICAS, spares: int = len(SPARES)) -> None:  # fmt: skip
        began = time.monotonic()
        recorded = self.cluster.state.get("shards")
        if shards is not None and recorded is not None and shards != recorded:
            raise RuntimeError(
                f"the cluster in {self.cluster.directory} has {recorded} shards; to start over"
                f" with {shards}, run `down` and delete the directory"
            )
        self.cluster.state.setdefault("shards", shards or SHARDS)
        self.cluster.state.setdefault("seed", seed)
        self.cluster.state.setdefault("monitoring", monitoring)
        self.cluster.state.setdefault("backups", backups)
        self.cluster.state.setdefault("replicas", replicas)
        self.cluster.state.setdefault("spares", len(spare_names(spares)))
        self._ensure_secrets()

        # MariaDB's data directories are made in parallel: the slow part of a first start.
        fresh = [self.cluster.server(n) for n in self.cluster.mysql_servers if not self.cluster.running(n)]  # fmt: skip
        with ThreadPoolExecutor(len(fresh) or 1) as pool:
            list(pool.map(Server.prepare, fresh))
        for name in SERVERS:
            if not self.cluster.running(name):
                self._start(name)

        for name in self.cluster.mysql_servers:
            self._once(
                f"users:{name}", mysql.create_users, self.cluster.port(name), self.cluster.secrets
            )
        self._once("documents", self._publish)
        self._once(
            "documents:no-password", migrate.drop_map_passwords, self.cluster.topology, self.out
        )
        self._open_masters()  # those this run started: every server starts read-only
        self._write_env()
        self._once("schema", self._make_schema)
        self._make_replicas()
        self._open_masters()
        # Every replica's threads run before anything counts on them (a failover would
        # refuse a replica still reconnecting): also after a restart of a stopped cluster.
        replication.resume(self.cluster, self.out)
        replication.wait_running(self.cluster)
        self._once("site", self._make_site)
        for name in (*SITE, *BACKUPS, *MONITORING):
            if name in self.cluster.names and not self.cluster.running(name):
                self._start(name)

        if self.started:
            took = time.monotonic() - began
            self.out.write(f"Started {len(self.started)} processes; up in {took:.1f}s.\n")
        else:
            self.out.write("Everything runs; nothing changed.\n")
        self.cluster.report(self.out)

    def _once(self, step: str, do: Callable[..., object], *args: Any) -> None:
        """Run a setup step unless a former ``up`` has done it."""
        if step not in self.cluster.state["done"]:
            do(*args)
            self.cluster.mark_done(step)

    def _start(self, name: str) -> None:
        """Start a process that is not running, on its recorded port and data."""
        record = self.cluster.state["processes"].get(name)
        if record is not None and record.get("pid"):
            # A process that died may still be letting go of its port.
            Pid(record["pid"], record["started"]).wait_exited(15)
        process = self.cluster.processes.get(name)
        if process is None or name in SITE:
            # The site's processes are built again: they take the env file as it is now.
            process = self.cluster.build(name)
        began = time.monotonic()
        if isinstance(process, Server):
            process.start()
        else:
            assert isinstance(process, SiteProcess)
            process.start().wait_ready(timeout=120)
        self.started.append(name)
        self._opened.discard(name)  # back read-only: made writable again if it is a master
        port = self.cluster.port(name) or "-"
        self.out.write(
            f"  started {name:<14} pid {process.pid!s:<8} port {port!s:<6}"
            f" ({time.monotonic() - began:.1f}s)\n"
        )
        self.out.flush()

    def _ensure_secrets(self) -> None:
        if self.cluster.secrets:
            return
        if self.cluster.state["processes"]:
            raise RuntimeError(
                f"{self.cluster.secrets_path} is missing: the cluster's passwords are lost"
            )
        self.cluster.secrets = {
            "root": secrets.token_hex(16),
            "replication": secrets.token_hex(16),
            "pinboard": secrets.token_hex(16),
            "secret_key": secrets.token_urlsafe(48),
        }
        write_json(self.cluster.secrets_path, self.cluster.secrets, private=True)

    def _make_env(self) -> dict[str, str]:
        port = self.cluster.port
        memcached = ",".join(f"{HOST}:{port(n)}" for n in ("memcached1", "memcached2"))
        return {
            "DJANGO_SETTINGS_MODULE": "pinboard.settings.dev",
            "PINBOARD_TOPOLOGY": self.cluster.topology,
            "PINBOARD_MEMCACHED": memcached,
            "PINBOARD_REDIS_URL": f"redis://{HOST}:{port('redis')}/0",
            "PINBOARD_BROKER_URL": f"redis://{HOST}:{port('broker')}/0",
            # Sessions and rate limits: a database of the broker's Redis (kept on disk, as
            # the graph's; the Redis drill wipes the graph's, which must not log anyone out).
            "PINBOARD_SESSIONS_REDIS_URL": f"redis://{HOST}:{port('broker')}/1",
            "PINBOARD_VAR_DIR": str(self.cluster.directory / "site"),
            "PINBOARD_ALLOWED_HOSTS": f"{HOST},localhost",
            # JSON lines with each request's ID, as in production (pinboard/logs.py).
            "PINBOARD_LOG_FORMAT": "json",
            "PINBOARD_SECRET_KEY": self.cluster.secrets["secret_key"],
            # As in production, the shard map holds no password: the site logs in as this.
            "PINBOARD_MYSQL_LOGIN": f"{mysql.APP_USER}:{self.cluster.secrets['pinboard']}",
            "PINBOARD_MYSQL_ADMIN": f"root:{self.cluster.secrets['root']}",
            # An unreachable master is fenced by stopping its process (toolkit/cluster).
            "PINBOARD_FENCE_COMMAND": shlex.join(
                [
                    sys.executable,
                    "-m",
                    "toolkit.cluster",
                    "--dir",
                    str(self.cluster.directory),
                    "fence",
                ]
            ),
            # What a replica logs in to its source as: REPLICATION SLAVE only (mysql.py).
            "PINBOARD_MYSQL_REPLICATION": (
                f"{mysql.REPLICATION_USER}:{self.cluster.secrets['replication']}"
            ),
            # The drills' load writes from one address, hundreds a second: not an attack.
            "PINBOARD_RATE_LIMITS": LOOPBACK_LOAD_LIMITS,
            # A task whose worker died unannounced is queued again this long after it was
            # taken (pinboard/settings/base.py), not after production's 20 minutes, so the
            # Celery drill can wait for it. A task held longer than this (a retry's
            # countdown) may run twice meanwhile: fan-out batches and job chunks are
            # idempotent.
            "PINBOARD_BROKER_VISIBILITY_TIMEOUT": str(BROKER_VISIBILITY_TIMEOUT),
            **self._optional(),
        }

    def _optional(self) -> dict[str, str]:
        """The console's charts, drawn from the cluster's Prometheus, and the backups, in
        ``backups/``, where the cluster runs them."""
        env = {}
        if self.cluster.state.get("monitoring", True):
            env["PINBOARD_PROMETHEUS_URL"] = monitoring.prometheus_url(self.cluster)
        if self.cluster.backed_up:
            env["PINBOARD_BACKUP_STORE"] = f"file://{self.cluster.directory / 'backups'}"
        return env

    def _write_env(self) -> None:
        path = self.cluster.env_path
        text = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in self._make_env().items())
        text = "# The local cluster's environment: `source` it (toolkit/cluster/).\n" + text
        if path.exists() and path.read_text() == text:
            return
        if path.exists() and any(self.cluster.running(name) for name in SITE):
            self.out.write(f"  {path} changed: the worker and the site take it when restarted\n")
        write_text(path, text, private=True)

    def _make_schema(self) -> None:
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
                self.cluster.secrets["operator"] = password.group(1)
                write_json(self.cluster.secrets_path, self.cluster.secrets, private=True)
        self.out.write(f"  schema made: {', '.join(timings)}\n")

    def _make_replicas(self) -> None:
        """Each replica starts as a cold copy of its master, then follows it: replaying
        every shard's CREATE TABLE on a replica would take minutes (each syncs the DDL log),
        so the masters make them in a bulk load, with neither binary log nor syncs
        (``mysql.server_args``). The replica follows from the first transaction of its
        master's log (GTID): the demo data and all after replicate as in production."""
        done = self.cluster.state["done"]
        pending = [(m, r) for m, r in self.cluster.pairs if f"replication:{r}" not in done]
        to_copy = [(m, r) for m, r in pending if f"copied:{r}" not in done]
        if to_copy:
            began = time.monotonic()
            servers = [self.cluster.server(n) for n in dict.fromkeys(n for pair in to_copy for n in pair)]  # fmt: skip
            with ThreadPoolExecutor(len(servers)) as pool:
                list(pool.map(lambda server: server.halt(), servers))
            halted = time.monotonic()
            with ThreadPoolExecutor(len(to_copy)) as pool:
                list(pool.map(lambda pair: self._copy(*pair), to_copy))
            copied = time.monotonic()
            os.sync()  # the bulk load and the copies, on disk before anything depends on them
            for master, replica in to_copy:
                self.cluster.mark_done(f"copied:{replica}")
                self.cluster.build(master)  # from now on with its binary log
            self.out.write(
                f"  replicas copied from their masters: stop {halted - began:.1f}s,"
                f" copy {copied - halted:.1f}s, sync {time.monotonic() - copied:.1f}s\n"
            )
        for name in self.cluster.mysql_servers:
            if not self.cluster.running(name):
                self._start(name)
        for master, replica in pending:
            mysql.follow(
                self.cluster.port(replica), self.cluster.port(master), self.cluster.secrets
            )
            self.cluster.mark_done(f"replication:{replica}")
            self.out.write(f"  {replica} follows {master} (GTID, semi-sync)\n")

    def _copy(self, master: str, replica: str) -> None:
        source = self.cluster.mariadb(master).datadir
        target = self.cluster.mariadb(replica).datadir
        shutil.rmtree(target, ignore_errors=True)
        # cp is five times faster than shutil.copytree over the 50,000 files of 2,048 shards.
        subprocess.run(["cp", "-a", str(source), str(target)], check=True)
        for pattern in _NOT_COPIED:
            for path in target.glob(pattern):
                path.unlink()

    def _make_site(self) -> None:
        """The worker, the demo data (through the site's own code), and the replicas caught
        up with it."""
        timings = []
        if not self.cluster.running("worker"):
            self._start("worker")
        if self.cluster.state["seed"]:
            began = time.monotonic()
            self._manage("seed_demo", "--if-empty")
            timings.append(f"seed_demo {time.monotonic() - began:.1f}s")
        began = time.monotonic()
        for master, replica in self.cluster.pairs:
            mysql.wait_caught_up(
                self.cluster.port(master),
                self.cluster.port(replica),
                self.cluster.secrets["root"],
                timeout=600,
            )
        timings.append(f"replicas caught up {time.monotonic() - began:.1f}s")
        self.out.write(f"  site ready: {', '.join(timings)}\n")

    def _publish(self) -> None:
        """The config documents, each published once (a later ``up`` keeps what operators
        have published since)."""
        shards = self.cluster.state["shards"]
        half = shards // 2
        port = self.cluster.port
        document = {
            "shards": {
                "version": 0,
                "shard_count": shards,
                "lookup_shards": shards,
                "hosts": {n: f"mysql://{HOST}:{port(n)}" for n in self.cluster.mysql_servers},
                "ranges": [
                    {"range": span, "master": master, "replicas": list(replicas)}
                    for span, (master, replicas) in zip(
                        ([0, half - 1], [half, shards - 1]),
                        self.cluster.ranges.items(),
                        strict=True,
                    )
                ],
                "open": [[0, shards - 1]],
            },
            "redis": {
                "version": 0,
                "instances": {"redis1": f"redis://{HOST}:{port('redis')}/0"},
                "ranges": [{"range": [0, VSHARDS - 1], "instance": "redis1"}],
            },
            "caches": {
                "version": 0,
                "pools": {
                    pool: [f"{HOST}:{port(n)}" for n in ("memcached1", "memcached2")]
                    for pool in CACHE_POOLS
                },
            },
        }
        source = open_source(self.cluster.topology)
        try:
            for name in documents.NAMES:
                try:
                    source.current(name)
                except NotPublished:
                    source.publish(
                        name, document[name], author="cluster", reason="the local cluster"
                    )
                    self.out.write(f"  published {name} to {self.cluster.topology}\n")
        finally:
            source.close()

    def _open_masters(self) -> None:
        """Clear ``read_only`` on the servers this ``up`` started that the shard map in force
        names as masters, in the GTID domain the map records for each (a split's new
        master's). Every server starts read-only, so a master that crashed and came back
        stays fenced once another has taken its shards; a server left running is left as
        it is (an operation may have made it read-only on purpose)."""
        started = {n for n in self.started if n in self.cluster.mysql_servers} - self._opened
        if not started:
            return
        self._opened |= started
        source = open_source(self.cluster.topology)
        try:
            shard_map = source.current(documents.SHARDS).document
        finally:
            source.close()
        ours = {self.cluster.port(n): n for n in self.cluster.mysql_servers}
        for entry in shard_map["ranges"]:
            port = endpoint(shard_map["hosts"][entry["master"]])[1]
            name = ours.get(port)
            has_replica = bool(replicas_of(entry))
            domain = shard_map.get("domains", {}).get(entry["master"])
            if name in started and mysql.set_writable(
                port, self.cluster.secrets["root"], semi_sync=has_replica, domain=domain
            ):
                first, last = entry["range"]
                self.out.write(f"  {name} writable: master of shards {first}-{last}\n")

    def _manage(self, *args: str, capture: bool = False) -> str:
        """``manage.py ARGS`` with the cluster's environment; its output shown as it comes
        (or returned, with ``capture``)."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.cluster.site_env(),
            stdout=subprocess.PIPE if capture else None,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} exited with {done.returncode}")
        return done.stdout or ""
