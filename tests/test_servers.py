"""The server fixtures give real, private, working servers."""

from __future__ import annotations

import socket
import uuid

import pytest

from tests.servers import (
    MariaDBServer,
    MemcachedServer,
    RedisServer,
    ServerStartError,
    ZooKeeperServer,
)


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
