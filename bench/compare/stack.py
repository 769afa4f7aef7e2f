"""The benchmark's servers: a private MariaDB, memcached and two Redis on loopback,
pinboard's 64-shard topology on that one MariaDB (two host names, as two masters would
be), the site's schema, and the ORM build's database beside the shard databases.

Every build reads the same MariaDB server; pinboard also has its cache pools (memcached)
and its follower graph and feeds (Redis), the cached ORM build its cacheops cache (a Redis
of its own). Every server is ours: started here on a free port, stopped by its own PID
when the ``ExitStack`` closes.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from shardstore import Topology
from toolkit.servers.mariadb import MariaDBServer
from toolkit.servers.memcached import MemcachedServer
from toolkit.servers.redis import RedisServer
from toolkit.site_processes import LOOPBACK_LOAD_LIMITS, ROOT

#: MariaDB options added to toolkit/servers/mariadb.py's own (which run it in /dev/shm
#: with innodb_flush_log_at_trx_commit=0, no doublewrite, no binlog). A buffer pool that
#: holds the whole data set at 1M pins, as a production host's would.
MARIADB_ARGS = [
    "--innodb-buffer-pool-size=3G",
    "--innodb-log-file-size=512M",
    "--max-allowed-packet=64M",
    "--max-connections=500",
    "--table-open-cache=8000",
]
ORM_DATABASE = "orm"
SYSTEM_DATABASES = {"information_schema", "mysql", "performance_schema", "sys"}


@dataclass(frozen=True)
class Stack:
    """Where everything runs, and the environments of the builds' processes: pinboard's,
    the plain ORM build's and the cached ORM build's (the same database)."""

    tmp: Path
    mysql: dict[str, object]  # MySQLdb.connect() keywords (root, autocommit)
    mariadb_pid: int
    topology: Topology
    pinboard_env: dict[str, str]
    orm_env: dict[str, str]
    cached_env: dict[str, str]

    def settle(self, limit: float = 300) -> str:
        """Wait until MariaDB is idle (under 5% of a CPU over 2 s) and has purged the undo
        log of a bulk load or copy, so its background work does not compete with a
        measurement on this machine's two cores."""
        import MySQLdb

        from .load import cpu_seconds

        conn = MySQLdb.connect(**self.mysql)
        cursor = conn.cursor()
        started = time.monotonic()
        try:
            while True:
                cursor.execute("SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'")
                history = int(cursor.fetchone()[1])
                before = cpu_seconds(self.mariadb_pid)
                time.sleep(2)
                busy = (cpu_seconds(self.mariadb_pid) - before) / 2
                waited = time.monotonic() - started
                if (busy < 0.05 and history < 1000) or waited > limit:
                    return f"{waited:.0f}s until MariaDB at {busy:.0%} CPU, history {history}"
        finally:
            conn.close()

    def empty_orm_database(self) -> None:
        """The ORM build's database, (re)made empty with its tables (its migrations)."""
        import MySQLdb

        conn = MySQLdb.connect(**self.mysql)
        try:
            cursor = conn.cursor()
            cursor.execute(f"DROP DATABASE IF EXISTS {ORM_DATABASE}")
            cursor.execute(f"CREATE DATABASE {ORM_DATABASE} CHARACTER SET utf8mb4")
        finally:
            conn.close()
        _run(self.orm_env, "-m", "bench.compare.orm", "migrate", "--verbosity", "0")

    def copy_databases(self, to: Stack) -> None:
        """Every database of this stack's MariaDB (pinboard's shards, the ORM build's) into
        ``to``'s, as they are now (mariadb-dump, one consistent snapshot)."""
        import MySQLdb

        conn = MySQLdb.connect(**self.mysql)
        try:
            cursor = conn.cursor()
            cursor.execute("SHOW DATABASES")
            names = sorted({row[0] for row in cursor.fetchall()} - SYSTEM_DATABASES)
        finally:
            conn.close()
        dump = subprocess.Popen(
            ["mariadb-dump", *_client_args(self.mysql), "--single-transaction", "--quick",
             "--databases", *names],
            stdout=subprocess.PIPE,
        )  # fmt: skip
        subprocess.run(["mariadb", *_client_args(to.mysql)], stdin=dump.stdout, check=True)
        assert dump.stdout is not None
        dump.stdout.close()
        if dump.wait() != 0:
            raise SystemExit(f"mariadb-dump failed ({dump.returncode})")

    def rebuild_redis(self) -> None:
        """pinboard's Redis follower graph and every home feed, from MySQL (the bulk load
        and copies go around Redis)."""
        subprocess.run(
            [sys.executable, "manage.py", "follower_graph", "rebuild"],
            cwd=ROOT, env=self.pinboard_env, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip

    def clear_caches(self) -> None:
        """Empty pinboard's cache pools (memcached flush_all) and the cached ORM build's
        Redis (FLUSHDB)."""
        import redis
        from pymemcache.client.base import Client

        host, port = self.pinboard_env["PINBOARD_MEMCACHED"].rsplit(":", 1)
        client = Client((host, int(port)), timeout=5)
        try:
            client.flush_all(noreply=False)
        finally:
            client.close()
        with redis.Redis.from_url(self.cached_env["COMPARE_ORM_REDIS"]) as cache:
            cache.flushdb()


def start_stack(tmp: Path, servers: ExitStack, *, shards: int, settings: str) -> Stack:
    """Start the servers (stopped when ``servers`` closes) and make the builds' schemas."""
    for kind in (MariaDBServer, MemcachedServer, RedisServer):
        if not kind.available():
            raise SystemExit(f"{kind.__name__}: {kind.available().reason}")
    mariadb = servers.enter_context(MariaDBServer(extra_args=MARIADB_ARGS))
    memcached = servers.enter_context(MemcachedServer(extra_args=["-m", "2048", "-t", "2"]))
    redis = servers.enter_context(RedisServer())
    orm_cache = servers.enter_context(RedisServer())
    address = f"mysql://root@{mariadb.address}"
    half = shards // 2
    topology_file = tmp / "topology.json"
    topology_file.write_text(
        json.dumps(
            {
                "version": 1,
                "shard_count": shards,
                "hosts": {"db1": address, "db2": address},
                "ranges": [
                    {"range": [0, half - 1], "master": "db1"},
                    {"range": [half, shards - 1], "master": "db2"},
                ],
                "open": [[0, shards - 1]],
                "lookup_shards": shards,
            }
        )
    )
    common = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PINBOARD_VAR_DIR": str(tmp / "var"),  # media: one image file shared by every pin
    }
    pinboard_env = {
        **common,
        "DJANGO_SETTINGS_MODULE": settings,
        "PINBOARD_TOPOLOGY": str(topology_file),
        "PINBOARD_SECRET_KEY": secrets.token_urlsafe(48),
        "PINBOARD_MEMCACHED": memcached.address,
        "PINBOARD_REDIS_URL": redis.url,
        "PINBOARD_RATE_LIMITS": LOOPBACK_LOAD_LIMITS,  # the workloads come from one address
    }
    orm_env = {
        **common,
        "DJANGO_SETTINGS_MODULE": "bench.compare.orm.settings",
        "COMPARE_ORM_DATABASE": f"{address}/{ORM_DATABASE}",
        "COMPARE_ORM_SECRET_KEY": secrets.token_urlsafe(48),
    }
    cached_env = {
        **orm_env,
        "DJANGO_SETTINGS_MODULE": "bench.compare.orm.settings_cached",
        "COMPARE_ORM_REDIS": orm_cache.url,
    }
    mysql = {
        "host": mariadb.host,
        "port": mariadb.port,
        "user": "root",
        "charset": "utf8mb4",
        "autocommit": True,
    }
    _run(pinboard_env, "manage.py", "migrate", "--verbosity", "0")
    _run(pinboard_env, "manage.py", "shardstore", "init")
    pid = mariadb.pid
    assert pid is not None
    topology = Topology.load(topology_file)
    stack = Stack(tmp, mysql, pid, topology, pinboard_env, orm_env, cached_env)
    stack.empty_orm_database()
    return stack


def _client_args(mysql: dict[str, object]) -> list[str]:
    return [f"--host={mysql['host']}", f"--port={mysql['port']}", f"--user={mysql['user']}"]


def _run(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, *args], cwd=ROOT, env=env, check=True)
