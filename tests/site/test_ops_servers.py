"""The console on real servers: MySQL hosts probed (a real replica with its lag), memcached
stats, Redis memory, a Celery broker's queue, and a site process whose ZooKeeper is down.

Each test starts what it needs (toolkit/servers.py); a server that is not installed skips
the test, or fails it under ``CI=true``.
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from celery import Celery
from django.test import Client

from pinboard.catalog import CATALOG
from pinboard.data_plane import cached_store
from pinboard.ops.fleet_metrics import mysql_hosts
from pinboard.ops.models import JournalEntry
from pinboard.ops.queries import caches, workers
from pinboard.ops.queries.probes import probe
from shardstore import Store, Topology, init_shards
from shardstore.control.file_source import FileSource
from shardstore.durability import NO_FALLBACK_MS
from shardstore.redis_shards import RedisShards, RedisTopology
from tests.config_documents import sqlite_shard_map
from tests.site.conftest import PLANE
from tests.site.ops import config_dir_fixture, hidden_fields, operator_fixture, staff_fixture, text  # noqa: F401
from tests.site.test_config_live import env_for, publish
from toolkit.processes import free_port
from toolkit.servers.mariadb import MariaDBServer
from toolkit.site_processes import GunicornSite, manage

# These start servers and processes of their own: whatever plane the run's site tests use,
# once per `make test` is enough.
pytestmark = pytest.mark.skipif(PLANE == "servers", reason="runs once, with the embedded plane")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {reason}", pytrace=False)
    pytest.skip(reason)


def _eventually(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


# -- MySQL: a source and its replica -------------------------------------------------


def _sql(server: MariaDBServer, *statements: str) -> list[Any]:
    import MySQLdb
    import MySQLdb.cursors

    connection = MySQLdb.connect(
        host=server.host, port=server.port, user="root", cursorclass=MySQLdb.cursors.DictCursor
    )
    try:
        cursor = connection.cursor()
        rows: list[Any] = []
        for statement in statements:
            cursor.execute(statement)
            rows = list(cursor.fetchall())
        return rows
    finally:
        connection.close()


@pytest.fixture(scope="module")
def replication() -> Iterator[tuple[MariaDBServer, MariaDBServer]]:
    """A MariaDB source with binary logging and a read-only replica following it."""
    import importlib.util

    if not MariaDBServer.available() or importlib.util.find_spec("MySQLdb") is None:
        _unavailable("MariaDB (mariadbd and mysqlclient) is needed for a replica")
    small = ["--innodb-buffer-pool-size=64M"]
    source = MariaDBServer([*small, "--log-bin=source-bin", "--server-id=1"]).start()
    replica = MariaDBServer([*small, "--server-id=2", "--read-only=1"]).start()
    try:
        status = _sql(source, "SHOW MASTER STATUS")[0]
        _sql(
            replica,
            f"CHANGE MASTER TO MASTER_HOST='{source.host}', MASTER_PORT={source.port},"
            f" MASTER_USER='root', MASTER_PASSWORD='', MASTER_LOG_FILE='{status['File']}',"
            f" MASTER_LOG_POS={status['Position']}",
            "START SLAVE",
        )
        yield source, replica
    finally:
        replica.stop()
        source.stop()


def mysql(server: MariaDBServer) -> str:
    return f"mysql://root@{server.host}:{server.port}"


def test_a_probe_tells_a_source_from_a_replica_and_reports_its_lag(
    replication: tuple[MariaDBServer, MariaDBServer],
) -> None:
    source, replica = replication
    seen = probe(mysql(source))
    assert seen.reachable and seen.read_only is False and seen.replication is None
    assert _eventually(lambda: probe(mysql(replica)).replication is not None, 10)
    assert _eventually(lambda: probe(mysql(replica)).replication.lag_seconds == 0, 20)  # type: ignore[union-attr]
    following = probe(mysql(replica))
    assert following.read_only is True
    assert following.replication is not None
    assert following.replication.source == f"{source.host}:{source.port}"
    assert (following.replication.io_running, following.replication.sql_running) == ("Yes", "Yes")

    _sql(replica, "STOP SLAVE SQL_THREAD")
    try:
        stopped = probe(mysql(replica)).replication
        assert stopped is not None and stopped.sql_running == "No" and stopped.lag_seconds is None
    finally:
        _sql(replica, "START SLAVE SQL_THREAD")


def test_a_host_that_does_not_answer_is_unreachable_not_an_error() -> None:
    seen = probe(f"mysql://root@127.0.0.1:{free_port()}")  # a port nobody listens on
    assert not seen.reachable and "127.0.0.1" in seen.error
    assert not probe("sqlite:///nonexistent/directory").reachable


def test_the_overview_shows_the_replica_its_state_and_lag(
    staff: Client,
    replication: tuple[MariaDBServer, MariaDBServer],
) -> None:
    source, replica = replication
    topology = Topology.from_json(
        {
            "version": 5,
            "shard_count": 16,
            "hosts": {"MySQL001A": mysql(source), "MySQL001B": mysql(replica)},
            "ranges": [{"range": [0, 15], "master": "MySQL001A", "replica": "MySQL001B"}],
            "open": [[0, 15]],
            "lookup_shards": 16,
        }
    )
    made = Store(topology, catalog=CATALOG)
    init_shards(made)  # on the source; the replica gets them through replication
    made.close()
    store = cached_store().store
    before = store.topology
    store.set_topology(topology)  # this process serves the replicated pair, for one page
    try:
        assert _eventually(lambda: probe(mysql(replica)).replication.lag_seconds == 0, 20)  # type: ignore[union-attr]
        page = text(staff.get("/ops/"))
        host_page = text(staff.get("/ops/hosts/MySQL001B/"))
        metrics = _fleet_metrics()
    finally:
        store.set_topology(before)
    replica_row = re.search(r'href="/ops/hosts/MySQL001B/".*?</tr>', page, re.S)
    assert replica_row is not None
    row = replica_row.group()
    assert "replica of 0..15" in row and "<td>ON</td>" in row
    assert f"from {source.host}:{source.port}: IO Yes, SQL Yes" in row
    assert re.search(r"<td>\d+ s</td>", row)  # its lag (a busy machine may show a second)
    source_row = re.search(r'href="/ops/hosts/MySQL001A/".*?</tr>', page, re.S)
    assert source_row is not None and "<td>OFF</td>" in source_row.group()
    assert "not a replica" in source_row.group()
    assert "masters no shard: it is a replica" in host_page
    # The source's commits do not wait for the replica: not backed up, and said so in red.
    assert "MySQL001A has no healthy replica: semi-sync is off" in page
    # The same, in the metrics the monitoring host scrapes (pinboard/ops/fleet_metrics.py).
    assert (
        metrics[("pinboard_mysql_up", "MySQL001A")]
        == metrics[("pinboard_mysql_up", "MySQL001B")]
        == 1
    )
    assert metrics[("pinboard_mysql_replication_running", "MySQL001B")] == 1
    assert 0 <= metrics[("pinboard_mysql_replication_lag_seconds", "MySQL001B")] < 5
    assert metrics[("pinboard_mysql_pair_healthy", "MySQL001A")] == 0
    assert ("pinboard_mysql_semi_sync_replicas", "MySQL001A") not in metrics  # semi-sync off

    _sql(replica, "SET GLOBAL rpl_semi_sync_slave_enabled = 1", "STOP SLAVE IO_THREAD")
    _sql(replica, "START SLAVE IO_THREAD")
    # As its durability (strict, the map's default) has it: no fallback to asynchronous.
    _sql(source, f"SET GLOBAL rpl_semi_sync_master_timeout = {NO_FALLBACK_MS}")
    _sql(source, "SET GLOBAL rpl_semi_sync_master_enabled = 1")
    store.set_topology(topology)
    try:
        assert _eventually(lambda: probe(mysql(source)).look().semi_sync.replicas == 1, 20)  # type: ignore[union-attr]
        page = text(staff.get("/ops/"))
        backed_up = _fleet_metrics()
    finally:
        store.set_topology(before)
        _sql(source, "SET GLOBAL rpl_semi_sync_master_enabled = 0")
        _sql(source, "SET GLOBAL rpl_semi_sync_master_timeout = DEFAULT")
    assert "has no healthy replica" not in page
    assert backed_up[("pinboard_mysql_pair_healthy", "MySQL001A")] == 1
    assert backed_up[("pinboard_mysql_semi_sync_replicas", "MySQL001A")] == 1
    assert backed_up[("pinboard_mysql_semi_sync_degraded", "MySQL001A")] == 0
    pair_row = re.search(r"<th>Backed up</th>.*?</tr>.*?</tr>", page, re.S)
    assert pair_row is not None and '<td class="ok">yes</td>' in pair_row.group()
    assert ">strict</a></td>" in pair_row.group()


def _fleet_metrics() -> dict[tuple[str, str], float]:
    """Each MySQL sample of the fleet's metrics by (name, host or master)."""
    return {
        (sample.name, sample.labels.get("host") or sample.labels["master"]): sample.value
        for family in mysql_hosts()
        for sample in family.samples
    }


# -- memcached, Redis, Celery ----------------------------------------------------------


def test_adding_a_memcached_server_runs_its_steps_and_the_page_shows_its_stats(
    staff: Client, config_dir: Path, memcached_server: Any
) -> None:
    local = {
        "version": 1,
        "pools": {name: ["local"] for name in ("users", "boards", "pins", "lists")},
    }
    FileSource(config_dir).publish("caches", local, author="test", reason="local pools")
    server = memcached_server.address
    page = text(
        staff.post(
            "/ops/actions/cache-server/",
            {"pool": "pins", "server": server, "change": "add", "step": "plan"},
        )
    )
    assert f"check {server} answers, then empty it" in page
    response = staff.post("/ops/actions/cache-server/", {**hidden_fields(page), "step": "run"})
    assert response.status_code == 302, text(response)
    entry = JournalEntry.objects.get(dry_run=False)
    assert entry.ok and re.fullmatch(r"memcached [\d.]+ emptied", entry.steps[0][2])
    assert FileSource(config_dir).current("caches").document["pools"]["pins"] == ["local", server]

    from pymemcache.client.base import Client as Memcache

    client = Memcache(server)
    client.set("ops-probe", b"1")
    client.get("ops-probe")
    client.get("ops-missing")
    client.close()
    shown = text(staff.get("/ops/caches/"))
    assert f"<code>{server}</code>" in shown and "caches document v2" in shown
    stats = caches.memcached_stats(server)
    assert stats.reachable and stats.hits >= 1 and stats.misses >= 1 and stats.items >= 1


def test_an_unreachable_memcached_server_is_shown_as_such() -> None:
    stats = caches.memcached_stats("127.0.0.1:1")
    assert not stats.reachable and stats.error


def test_redis_instances_report_their_memory_and_keys(redis_server: Any) -> None:
    shards = RedisShards(RedisTopology.single(redis_server.url))
    try:
        [view] = caches.redis_views(shards)
    finally:
        shards.close()
    assert view.vshards == 8192 and view.ranges == [(0, 8191)]
    assert re.fullmatch(r"[\d.]+[BKMG]", view.memory) and view.keys is not None
    dead = RedisShards(RedisTopology.single("redis://127.0.0.1:1/0"))
    try:
        [down] = caches.redis_views(dead)
    finally:
        dead.close()
    assert down.memory == "unreachable" and down.error


def test_a_redis_brokers_queue_depth_is_read_from_its_list(redis_server: Any) -> None:
    import redis

    url = f"redis://{redis_server.host}:{redis_server.port}/12"
    client = redis.Redis.from_url(url)
    client.delete("celery")
    client.lpush("celery", b"a", b"b", b"c")
    try:
        app = Celery("ops-test", broker=url, set_as_current=False)  # the site keeps its own
        app.conf.task_always_eager = False
        view = workers.celery_view(app)
        assert not view.eager and view.queues == [workers.QueueDepth("celery", 3)]
        assert view.workers is None  # no worker answers
        down = workers.queue_depth(app, "redis://127.0.0.1:1/0", "celery")
        assert down.depth is None and down.error
    finally:
        client.delete("celery")
        client.close()


# -- ZooKeeper down: a real site process ------------------------------------------------


class Browser:
    """Enough of a browser for the admin log-in: cookies and the CSRF token."""

    def __init__(self, site: GunicornSite) -> None:
        self.site = site
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def get(self, path: str) -> str:
        with self.opener.open(self.site.url(path), timeout=30) as response:
            return response.read().decode()

    def log_in(self, username: str, password: str) -> None:
        form = self.get("/admin/login/?next=/ops/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
        assert token is not None
        data = urllib.parse.urlencode(
            {
                "csrfmiddlewaretoken": token.group(1),
                "username": username,
                "password": password,
                "next": "/ops/",
            }
        ).encode()
        request = urllib.request.Request(
            self.site.url("/admin/login/?next=/ops/"),
            data,
            headers={"Referer": self.site.url("/admin/login/")},
        )
        with self.opener.open(request, timeout=30) as response:
            assert response.url == self.site.url("/ops/"), response.url


def test_the_overview_warns_when_zookeeper_is_down_and_after_a_boot_from_the_local_copy(
    private_zookeeper: Any, tmp_path: Path
) -> None:
    spec = f"zk://{private_zookeeper.address}/console"
    init_shards(
        Store(
            Topology.from_json({**sqlite_shard_map(tmp_path / "shards"), "version": 1}),
            catalog=CATALOG,
        )
    )
    publish(spec, sqlite_shard_map(tmp_path / "shards"), "first")
    env = env_for(tmp_path, spec)
    manage(env, "migrate", "--verbosity", "0")
    password = manage(env, "ensure_operator").split("password: ")[1].split()[0]
    site = GunicornSite(env, tmp_path / "gunicorn.log", workers=1).start()
    try:
        site.wait_ready()
        browser = Browser(site)
        browser.log_in("operator", password)
        assert "is connected" in browser.get("/ops/")
        private_zookeeper.halt()
        assert _eventually(lambda: "Not connected to the config source" in browser.get("/ops/"), 30)
        site.stop()

        site = GunicornSite(env, tmp_path / "gunicorn-2.log", workers=1).start()
        site.wait_ready()
        browser = Browser(site)  # sessions live in the process: log in again
        browser.log_in("operator", password)
        page = browser.get("/ops/")
        assert "started from its local copy of shards" in page
        assert "Not connected to the config source" in page
    finally:
        site.stop()
