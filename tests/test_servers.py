"""The server fixtures give real, private, working servers."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.config_documents import eventually
from toolkit.processes import Pid, ServerStartError
from toolkit.servers.mariadb import MariaDBServer
from toolkit.servers.memcached import MemcachedServer
from toolkit.servers.redis import RedisServer
from toolkit.servers.zookeeper import ZooKeeperServer
from toolkit.site_processes import ROOT


def _unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def test_mariadb_server(mariadb_server: MariaDBServer) -> None:
    import MySQLdb

    database = _unique("test_servers")
    connection = MySQLdb.connect(host=mariadb_server.host, port=mariadb_server.port, user="root")
    try:
        cursor = connection.cursor()
        # It is our private server, and root came in over TCP without a password.
        cursor.execute("SELECT @@datadir, CURRENT_USER(), VERSION()")
        datadir, current_user, version = cursor.fetchone()
        assert datadir.rstrip("/") == str(mariadb_server.datadir)
        assert current_user == "root@127.0.0.1"
        assert "MariaDB" in version

        cursor.execute(f"CREATE DATABASE {database}")
        cursor.execute(
            f"CREATE TABLE {database}.pins ("
            " id BIGINT UNSIGNED PRIMARY KEY,"
            " title VARCHAR(200) NOT NULL"
            ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
        )
        cursor.executemany(
            f"INSERT INTO {database}.pins (id, title) VALUES (%s, %s)",
            [(2, "second"), (1, "first ✓")],
        )
        connection.commit()
        cursor.execute(f"SELECT id, title FROM {database}.pins ORDER BY id")
        assert cursor.fetchall() == ((1, "first ✓"), (2, "second"))
    finally:
        connection.cursor().execute(f"DROP DATABASE IF EXISTS {database}")
        connection.close()


def test_redis_server(redis_server: RedisServer) -> None:
    import redis

    client = redis.Redis.from_url(redis_server.url)
    try:
        key = _unique("test_servers")
        assert client.set(key, b"value", ex=60) is True
        assert client.get(key) == b"value"
        assert client.delete(key) == 1
        assert client.get(key) is None
        # Private: the data directory is ours, and nothing is saved to it.
        assert client.config_get("dir")["dir"] == str(redis_server.tmpdir)
        assert client.config_get("save")["save"] == ""
    finally:
        client.close()


def test_memcached_server(memcached_server: MemcachedServer) -> None:
    from pymemcache.client.base import Client

    client = Client((memcached_server.host, memcached_server.port), connect_timeout=5, timeout=5)
    try:
        key = _unique("test_servers")
        assert client.get(key) is None
        assert client.set(key, b"value", noreply=False) is True
        assert client.get(key) == b"value"
        assert int(client.stats()[b"pid"]) == memcached_server.pid
    finally:
        client.close()


def test_zookeeper_server(zookeeper_server: ZooKeeperServer) -> None:
    from kazoo.client import KazooClient

    client = KazooClient(hosts=zookeeper_server.address, timeout=10)
    client.start(timeout=30)
    try:
        path = f"/{_unique('test_servers')}/node"
        client.create(path, b"value", makepath=True)
        data, stat = client.get(path)
        assert data == b"value"
        assert stat.version == 0
        client.set(path, b"changed")
        assert client.get(path)[0] == b"changed"
        assert client.get_children(path.rsplit("/", 1)[0]) == ["node"]
        client.delete(path.rsplit("/", 1)[0], recursive=True)
        assert client.exists(path) is None
    finally:
        client.stop()
        client.close()


# The harness itself, checked with Redis because it starts fastest.  Asking for
# redis_server makes these tests skip (or fail in CI) like the one above.


def test_servers_run_side_by_side_and_stop_cleanly(redis_server: RedisServer) -> None:
    second = RedisServer().start()
    port, tmpdir, process = second.port, second.tmpdir, second.process
    assert tmpdir is not None and process is not None
    assert port != redis_server.port
    assert tmpdir.is_dir()

    second.stop()
    assert process.returncode is not None  # the process is gone...
    assert not tmpdir.exists()  # ...and so is its data
    with pytest.raises(OSError):
        socket.create_connection((second.host, port), timeout=1).close()
    second.stop()  # stopping twice is harmless


def test_start_failure_quotes_the_server_log(redis_server: RedisServer) -> None:
    broken = RedisServer(extra_args=["--no-such-directive", "yes"])
    with pytest.raises(ServerStartError, match=r"(?s)exited with code .*no-such-directive"):
        broken.start()
    assert broken.process is None and broken.tmpdir is None


# -- servers with a home, detached: the local cluster's life -------------------------

_LAUNCHER = """
import json, sys, time
from pathlib import Path
from toolkit.servers.redis import RedisServer
home = Path(sys.argv[1])
detached = RedisServer(["--appendonly", "yes", "--appendfsync", "always"], home=home, detached=True)
attached = RedisServer()
detached.start(), attached.start()
print(json.dumps({"port": detached.port, "pid": detached.running.pid,
                  "started": detached.running.started, "attached": attached.pid}), flush=True)
time.sleep(120)
"""


def _redis(port: int) -> Any:
    import redis

    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)


def test_a_detached_server_outlives_its_launcher_keeps_its_data_and_port(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    home = tmp_path / "redis"
    launcher = subprocess.Popen(
        [sys.executable, "-c", _LAUNCHER, str(home)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert launcher.stdout is not None
    started = json.loads(launcher.stdout.readline())
    args = ["--appendonly", "yes", "--appendfsync", "always"]  # as the launcher's
    adopted = RedisServer(args, home=home, port=started["port"], detached=True)
    try:
        # The launcher dies hard: its test server goes with it, the detached one stays.
        launcher.kill()
        launcher.wait()
        attached = Pid.of(started["attached"])
        assert attached is None or eventually(lambda: not attached.alive(), 15)
        assert _redis(started["port"]).set("kept", b"yes")

        # Found again by PID and start time; a record with another start time is a stranger.
        assert not RedisServer(home=home, port=started["port"]).adopt(started["pid"], 1)
        assert adopted.adopt(started["pid"], started["started"])
        assert adopted.alive and adopted.pid == started["pid"]

        # A crash and a restart: same port, same data, a new process.
        adopted.halt(kill=True)
        assert not adopted.alive and adopted.pid is None
        adopted.restart()
        assert adopted.port == started["port"] and adopted.pid != started["pid"]
        assert _redis(adopted.port).get("kept") == b"yes"

        # stop() keeps a home; the next start() reuses it (prepared once) and the port.
        adopted.stop()
        assert not adopted.alive and (home / "server.log").is_file()
        again = RedisServer(args, home=home, port=started["port"]).start()
        try:
            assert again.port == started["port"] and _redis(again.port).get("kept") == b"yes"
        finally:
            again.stop()
    finally:
        launcher.kill()
        launcher.wait()
        launcher.stdout.close()
        adopted.stop()
        assert adopted.adopt(started["pid"], started["started"]) is False


def test_a_fixed_port_that_is_taken_is_an_error_not_another_port(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    server = RedisServer(home=tmp_path / "redis", port=redis_server.port)
    with pytest.raises(ServerStartError, match=rf"port {redis_server.port} is taken"):
        server.start()
    assert not server.alive
    assert _redis(redis_server.port).ping()  # the one that holds it is untouched
