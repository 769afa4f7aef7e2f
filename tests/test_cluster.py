"""The local cluster (toolkit/cluster/), small (64 shards, no demo data) in the test's own
directory: every process answers, the replicas follow their masters with GTIDs and semi-sync,
the site's MySQL user is fenced by ``read_only``, ``up`` again changes nothing, a killed
process comes back alone on its port, each range is backed up and each master archived
(and a backup asked for is taken), and ``down`` leaves none of its processes alive.

Its processes are started attached (``detached=False``): they die with the test run.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shardstore.backups.manifest import manifests
from shardstore.backups.store import DirectoryStore
from shardstore.control import backup_records
from shardstore.control.sources import open_source
from tests.config_documents import eventually
from tests.conftest import unavailable
from toolkit.cluster import mysql
from toolkit.cluster.commands import down, up
from toolkit.cluster.files import read_env
from toolkit.cluster.plan import PROCESSES
from toolkit.cluster.state import Cluster
from toolkit.processes import Pid
from toolkit.servers.mariadb import MariaDBServer
from toolkit.servers.memcached import MemcachedServer
from toolkit.servers.prometheus import MysqldExporter, NodeExporter, PrometheusServer
from toolkit.servers.redis import RedisServer
from toolkit.servers.zookeeper import ZooKeeperServer
from toolkit.site_processes import ROOT

# It starts a dozen processes of its own: once per `make test` is enough.
pytestmark = pytest.mark.skipif(
    os.environ.get("PINBOARD_TEST_PLANE") == "servers", reason="runs once, in the first run"
)

SHARDS = 64
MONITORING_SERVERS = (PrometheusServer, NodeExporter, MysqldExporter)
_READ_ONLY, _ACCESS_DENIED = 1290, 1227


@pytest.fixture
def directory(tmp_path: Path) -> Iterator[Path]:
    servers = (MariaDBServer, RedisServer, MemcachedServer, ZooKeeperServer, *MONITORING_SERVERS)
    for server in servers:
        if not server.available():
            unavailable(server.name, server.available().reason)
    if importlib.util.find_spec("MySQLdb") is None:
        unavailable("MariaDB", "the MySQLdb module is not installed")
    if shutil.which("mariadb-backup") is None or shutil.which("zstd") is None:
        unavailable("mariadb-backup", "mariadb-backup and zstd are needed (Debian: mariadb-backup, zstd)")  # fmt: skip
    directory = tmp_path / "cluster"
    yield directory
    if (directory / "cluster.json").exists():
        down(directory, out=io.StringIO())  # whatever the test left running


def _up(directory: Path) -> str:
    out = io.StringIO()
    up(directory, shards=SHARDS, seed=False, detached=False, out=out)
    return out.getvalue()


def _pids(directory: Path) -> dict[str, Pid]:
    state = json.loads((directory / "cluster.json").read_text())
    return {n: Pid(r["pid"], r["started"]) for n, r in state["processes"].items() if r["pid"]}


def _sql(cluster: Cluster, name: str, sql: str, *, user: str = "root") -> list[dict[str, Any]]:
    password = cluster.secrets["root" if user == "root" else "pinboard"]
    connection = mysql.connect(cluster.port(name), user=user, password=password)
    try:
        return mysql.query(connection, sql)
    finally:
        connection.close()


def _document(cluster: Cluster, name: str) -> dict[str, Any]:
    source = open_source(cluster.topology)
    try:
        return source.current(name).document
    finally:
        source.close()


def _status(cluster: Cluster, name: str, variable: str) -> str:
    rows = _sql(cluster, name, f"SHOW GLOBAL STATUS LIKE '{variable}'")
    return str(rows[0]["Value"])


def test_local_cluster_up_again_repaired_and_down(directory: Path) -> None:
    _up(directory)
    cluster = Cluster.load(directory)
    assert set(cluster.processes) == set(PROCESSES)

    _every_process_answers(cluster)
    _backed_up_and_archived(cluster)
    _prometheus_scrapes_every_target_and_loads_the_rules(cluster)
    _replicas_follow_with_gtid_and_semi_sync(cluster)
    _the_site_user_is_fenced_by_read_only(cluster)
    _secrets_and_env_are_private(cluster)
    shard_map = _document(cluster, "shards")
    serving = {n for r in shard_map["ranges"] for n in (r["master"], *r["replicas"])}
    assert set(shard_map["hosts"]) - serving == {"spare1"}  # the guard's spare

    # up again: nothing starts, nothing is written.
    before, state = _pids(directory), (directory / "cluster.json").read_text()
    assert "nothing changed" in _up(directory)
    assert _pids(directory) == before and (directory / "cluster.json").read_text() == state

    # A master crashes; up brings back that one alone, on its port, writable again, and
    # returns once its replica follows it again, though that one was left to retry its
    # source only every minute (as an operation may leave it).
    port = cluster.port("db2a")
    Cluster.load(directory)["db2a"].halt(kill=True)
    assert not before["db2a"].alive()
    _sql(cluster, "db2b", "STOP SLAVE")
    _sql(cluster, "db2b", "CHANGE MASTER TO MASTER_CONNECT_RETRY = 60")
    _sql(cluster, "db2b", "START SLAVE")
    out = _up(directory)
    assert "started db2a" in out and out.count("  started ") == 1
    assert "db2b replicates from db2a again, retrying every 1s" in out
    (status,) = _sql(cluster, "db2b", "SHOW SLAVE STATUS")
    assert (status["Slave_IO_Running"], status["Slave_SQL_Running"]) == ("Yes", "Yes")
    assert status["Connect_Retry"] == 1
    after = _pids(directory)
    assert after["db2a"] != before["db2a"] and after["db2a"].alive()
    assert {n: p for n, p in after.items() if n != "db2a"} == {
        n: p for n, p in before.items() if n != "db2a"
    }
    cluster = Cluster.load(directory)
    assert cluster.port("db2a") == port
    assert _sql(cluster, "db2a", "SELECT @@read_only AS ro")[0]["ro"] == 0  # the map's master
    replicas = str(len(cluster.ranges["db2a"]))  # each acknowledges again
    assert eventually(lambda: _status(cluster, "db2a", "Rpl_semi_sync_master_clients") == replicas, 30)  # fmt: skip
    _write_replicates(cluster, "db2a", "db2b", shard=SHARDS - 1)

    # A replica crashes: its threads do not start with it (skip_slave_start, which keeps
    # its relay log), and up starts them, the relay log applied first.
    Cluster.load(directory)["db1b"].halt(kill=True)
    out = _up(directory)
    assert "started db1b" in out and "db1b replicates from db1a again" in out
    (status,) = _sql(cluster, "db1b", "SHOW SLAVE STATUS")
    assert (status["Slave_IO_Running"], status["Slave_SQL_Running"]) == ("Yes", "Yes")
    _write_replicates(cluster, "db1a", "db1b", shard=0)

    # status from the command line, then down: every recorded process is gone.
    status = subprocess.run(
        [sys.executable, "-m", "toolkit.cluster", "status", "--dir", str(directory)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert status.returncode == 0, status.stdout + status.stderr
    assert all(f"{name} " in status.stdout for name in PROCESSES)
    replication, pairs = status.stdout.split("\nREPLICA ", 1)[1].split("\n\nPAIRS ", 1)
    assert [line.split()[:4] for line in replication.splitlines()[1:]] == [
        [replica, master, "Yes", "Yes"] for master, replica in Cluster.load(directory).pairs
    ]
    assert all(line.split()[4].endswith("s") for line in replication.splitlines()[1:])
    assert [line for line in pairs.splitlines()[1:] if not line.startswith("  ")] == [
        "ok   db1a -> db1b, db1c (strict): healthy",
        "ok   db2a -> db2b, db2c (strict): healthy",
    ]
    pids = _pids(directory)
    assert len(pids) == len(PROCESSES)
    assert down(directory, out=io.StringIO())
    assert not [name for name, pid in pids.items() if pid.alive()]
    assert not _pids(directory)


def _prometheus_scrapes_every_target_and_loads_the_rules(cluster: Cluster) -> None:
    prometheus = cluster.env()["PINBOARD_PROMETHEUS_URL"]
    jobs = {"prometheus", "web", "worker", "node", "mysqld"}

    def targets() -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{prometheus}/api/v1/targets", timeout=5) as reply:
            found: list[dict[str, Any]] = json.loads(reply.read())["data"]["activeTargets"]
            return found

    assert eventually(lambda: all(t["health"] == "up" for t in targets()), 30), targets()
    assert {t["labels"]["job"] for t in targets()} == jobs
    assert sum(t["labels"]["job"] == "mysqld" for t in targets()) == len(cluster.mysql_servers) == 7
    with urllib.request.urlopen(f"{prometheus}/api/v1/rules", timeout=5) as reply:
        groups = json.loads(reply.read())["data"]["groups"]
    rules = [rule for group in groups for rule in group["rules"]]
    assert rules and all(rule["health"] != "err" for rule in rules), rules


def _every_process_answers(cluster: Cluster) -> None:
    import redis
    from celery import Celery
    from kazoo.client import KazooClient
    from pymemcache.client.base import Client

    for name in cluster.mysql_servers:
        assert _sql(cluster, name, "SELECT 1 AS one") == [{"one": 1}]
    for name in ("redis", "broker"):
        client = redis.Redis(port=cluster.port(name))
        assert client.ping()
        client.close()
    replica = redis.Redis(port=cluster.port("redis-replica"))
    info = replica.info("replication")
    replica.close()
    assert info["role"] == "slave" and info["master_port"] == cluster.port("redis")
    for name in ("memcached1", "memcached2"):
        memcached = Client(("127.0.0.1", cluster.port(name)), connect_timeout=5, timeout=5)
        assert memcached.version()
        memcached.close()

    zookeeper = KazooClient(hosts=f"127.0.0.1:{cluster.port('zookeeper')}", timeout=10)
    zookeeper.start(timeout=30)
    try:
        assert set(zookeeper.get_children("/pinboard")) >= {"shards", "redis", "caches"}
    finally:
        zookeeper.stop()
        zookeeper.close()

    app = Celery("cluster-test", broker=cluster.env()["PINBOARD_BROKER_URL"], set_as_current=False)
    try:
        replies = app.control.ping(timeout=10)
    finally:
        app.close()
    assert replies and all(reply == {"ok": "pong"} for r in replies for reply in r.values())

    with urllib.request.urlopen(cluster.url + "readyz", timeout=10) as response:
        health = json.loads(response.read())
    assert health["config"] == {"shards": 1, "redis": 1, "caches": 1}
    assert health["source"]["connected"]
    with urllib.request.urlopen(cluster.url + "static/pinboard.css", timeout=10) as response:
        assert response.status == 200


def _backed_up_and_archived(cluster: Cluster) -> None:
    """``up`` returned with a backup of each range, from a replica; the archiver holds each
    master's binary logs; a backup asked for (``backup request``) is taken soon after."""
    store = DirectoryStore(cluster.directory / "backups")
    assert cluster.env()["PINBOARD_BACKUP_STORE"] == store.url
    spans = {f"{r['range'][0]}-{r['range'][1]}" for r in _document(cluster, "shards")["ranges"]}
    made = manifests(store)
    assert {m.ranges for m in made} == spans and {m.host for m in made} <= {"db1b", "db2b"}
    source = open_source(cluster.topology)
    try:
        archived = lambda: set(backup_records.status(source).archived) == {"db1a", "db2a"}  # noqa: E731
        assert eventually(archived, 30), backup_records.status(source).archived
        assert backup_records.status(source).verified == {}  # daily, the first an hour in
        asked = subprocess.run(
            [sys.executable, "manage.py", "shardstore", "backup", "request", f"0-{SHARDS // 2 - 1}"],
            cwd=ROOT, env=cluster.site_env(), capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert asked.returncode == 0 and "asked for" in asked.stdout, asked.stdout + asked.stderr
        assert eventually(lambda: len(manifests(store)) == len(made) + 1, 60), manifests(store)
        assert backup_records.status(source).due(f"0-{SHARDS // 2 - 1}", 3600, time.time()) is None  # fmt: skip
    finally:
        source.close()


def _replicas_follow_with_gtid_and_semi_sync(cluster: Cluster) -> None:
    for master, replica in cluster.pairs:
        (status,) = _sql(cluster, replica, "SHOW SLAVE STATUS")
        assert (status["Slave_IO_Running"], status["Slave_SQL_Running"]) == ("Yes", "Yes")
        assert status["Using_Gtid"] == "Current_Pos"
        assert status["Connect_Retry"] == mysql.CONNECT_RETRY
        assert status["Master_Port"] == cluster.port(master)
        assert _status(cluster, master, "Rpl_semi_sync_master_status") == "ON"
        assert (
            _status(cluster, master, "Rpl_semi_sync_master_clients") == "2"
        )  # either acknowledges
        assert _status(cluster, replica, "Rpl_semi_sync_slave_status") == "ON"
        # Only the master waits for acknowledgements: a replica that did would stall its
        # own applier (it has no replica to acknowledge).
        assert _status(cluster, replica, "Rpl_semi_sync_master_status") == "OFF"
        for name in (master, replica):
            (settings,) = _sql(
                cluster,
                name,
                "SELECT @@gtid_strict_mode AS strict, @@log_slave_updates AS updates,"
                " @@log_bin AS binlog, @@rpl_semi_sync_master_wait_point AS point",
            )
            assert settings == {"strict": 1, "updates": 1, "binlog": 1, "point": "AFTER_SYNC"}
        # The replica has its master's shards, and no other.
        shards = _sql(cluster, replica, "SHOW DATABASES LIKE 'db%'")
        assert len(shards) == SHARDS // 2
    _write_replicates(cluster, "db1a", "db1b", shard=0)


def _write_replicates(cluster: Cluster, master: str, replica: str, *, shard: int) -> None:
    """A row the site's user writes on the master is on the replica once its GTID is applied."""
    marker = 4_000_000 + shard
    _sql(
        cluster,
        master,
        f"INSERT INTO db{shard:05d}.mapping_counts (from_id, relation, n) VALUES ({marker}, 'test', 1)"
        " ON DUPLICATE KEY UPDATE n = n + 1",
        user="pinboard",
    )
    (position,) = _sql(cluster, master, "SELECT @@gtid_binlog_pos AS pos")
    (waited,) = _sql(cluster, replica, f"SELECT MASTER_GTID_WAIT('{position['pos']}', 30) AS w")
    assert waited["w"] == 0
    rows = _sql(cluster, replica, f"SELECT n FROM db{shard:05d}.mapping_counts WHERE from_id = {marker}")  # fmt: skip
    assert rows and rows[0]["n"] >= 1


def _the_site_user_is_fenced_by_read_only(cluster: Cluster) -> None:
    import MySQLdb

    for master, replica in cluster.pairs:
        assert _sql(cluster, master, "SELECT @@read_only AS ro")[0]["ro"] == 0
        assert _sql(cluster, replica, "SELECT @@read_only AS ro")[0]["ro"] == 1
    write = "INSERT INTO db00000.mapping_counts (from_id, relation, n) VALUES (1, 'fenced', 1)"
    with pytest.raises(MySQLdb.OperationalError) as refused:
        _sql(cluster, "db1b", write, user="pinboard")
    assert refused.value.args[0] == _READ_ONLY
    with pytest.raises(MySQLdb.OperationalError) as denied:
        _sql(cluster, "db1b", "SET GLOBAL read_only = 0", user="pinboard")
    assert denied.value.args[0] == _ACCESS_DENIED
    grants = " ".join(str(*row.values()) for row in _sql(cluster, "db1a", "SHOW GRANTS", user="pinboard"))  # fmt: skip
    assert "SUPER" not in grants and "READ ONLY ADMIN" not in grants and "ALL" not in grants


def _secrets_and_env_are_private(cluster: Cluster) -> None:
    for path in (cluster.secrets_path, cluster.env_path):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    env = read_env(cluster.env_path)
    assert env == cluster.env()
    assert env["PINBOARD_TOPOLOGY"] == cluster.topology
    assert env["PINBOARD_MYSQL_ADMIN"] == f"root:{cluster.secrets['root']}"
    assert env["PINBOARD_MYSQL_REPLICATION"] == f"repl:{cluster.secrets['replication']}"
    grants = _sql(cluster, "db1a", "SHOW GRANTS FOR 'repl'@'127.0.0.1'")
    assert [str(*row.values()).split(" TO ")[0] for row in grants] == [
        "GRANT REPLICATION SLAVE ON *.*"
    ]
    assert env["PINBOARD_VAR_DIR"] == str(cluster.directory / "site")
    # A shell reads it the same way.
    shell = subprocess.run(
        ["bash", "-c", f"source {cluster.env_path} && echo $PINBOARD_BROKER_URL"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert shell.stdout.strip() == env["PINBOARD_BROKER_URL"]
    # The site logs in as PINBOARD_MYSQL_LOGIN, as in production: the map holds no password.
    assert env["PINBOARD_MYSQL_LOGIN"] == f"pinboard:{cluster.secrets['pinboard']}"
    shard_map = json.dumps(_document(cluster, "shards"))
    assert "mysql://127.0.0.1:" in shard_map and "@" not in shard_map
