"""A replicated MariaDB pair (a master and one replica, or two) for the operations' tests
(failover, split, diff)."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from shardstore import Store, Topology, init_shards
from shardstore.control.config_source import ConfigSource
from shardstore.control.file_source import FileSource
from shardstore.control.mysql_hosts import MySQLHost
from tests.conftest import unavailable
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CATALOG

APP = "app:app-password"  # the store's user: no privilege that read_only lets through
REPLICATION = "repl:repl-password"  # replicas' user: REPLICATION SLAVE only
#: A store's options to log in as ``app``: the shard map holds no password, as in production.
APP_LOGIN = {"mysql_login": APP}


def root(address: str) -> MySQLHost:
    return MySQLHost(address, user="root", password="", replication=REPLICATION)


#: As in production: binary logs on both (either can lead), GTIDs, semi-sync able,
#: read_only from the start (a master is made writable once it is up, and one that crashes
#: comes back read-only), and a replica's threads stopped after a restart, its relay log
#: kept (``shardstore/control/relay_log.py``).
SERVER_OPTIONS = [
    "--innodb-buffer-pool-size=64M",
    "--log-slave-updates",
    "--gtid-strict-mode=1",
    "--log-bin=node-bin",
    "--read-only=1",
    "--rpl-semi-sync-slave-enabled=1",
    "--rpl-semi-sync-master-wait-point=AFTER_SYNC",
    "--skip-slave-start",
    # A replica notices a silent master, and a master a replica gone, within seconds (the
    # heartbeat is half of it).
    "--slave-net-timeout=10",
]


def start_servers(count: int) -> list[MariaDBServer]:
    """``count`` new servers, read-only, replicating from no one, each with the store's
    user ``app`` and the replicas' ``repl`` (made on each alone, as provisioning does)."""
    if not MariaDBServer.available() or importlib.util.find_spec("MySQLdb") is None:
        unavailable("MariaDB", "mariadbd and mysqlclient are needed for replication")
    servers: list[MariaDBServer] = []
    try:
        for server_id in range(1, count + 1):
            server = MariaDBServer([*SERVER_OPTIONS, f"--server-id={server_id}"]).start()
            servers.append(server)
            with root(f"mysql://{server.address}") as db:
                db.query("SET SESSION sql_log_bin = 0")
                db.query("CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY 'app-password'")
                db.query("GRANT ALL PRIVILEGES ON `db%`.* TO 'app'@'127.0.0.1'")
                db.query("CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY 'repl-password'")
                db.query("GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'")
    except BaseException:
        for server in servers:
            server.stop()
        raise
    return servers


@contextmanager
def running(count: int) -> Iterator[list[MariaDBServer]]:
    """``count`` new servers (``start_servers``) while the block runs."""
    servers = start_servers(count)
    try:
        yield servers
    finally:
        for server in reversed(servers):
            server.stop()


def replicating(master: MariaDBServer, *replicas: MariaDBServer) -> None:
    """``master`` writable, the ``replicas`` following it by GTID, semi-synchronously: any
    one's acknowledgement releases a commit. Only the master waits for acknowledgements (a
    replica that did would hold back its own applier)."""
    with root(f"mysql://{master.address}") as m:
        m.set_semi_sync(True)
        m.set_read_only(False)
        for replica in replicas:
            with root(f"mysql://{replica.address}") as r:
                r.replicate_from(m)


@pytest.fixture
def pair() -> Iterator[tuple[MariaDBServer, MariaDBServer]]:
    """A master and a replica following it (``replicating``)."""
    with running(2) as (master, replica):
        replicating(master, replica)
        yield master, replica


@pytest.fixture
def trio() -> Iterator[tuple[MariaDBServer, MariaDBServer, MariaDBServer]]:
    """A master and two replicas following it (``replicating``)."""
    with running(3) as (master, *replicas):
        replicating(master, *replicas)
        yield master, replicas[0], replicas[1]


def publish_pair(
    source: FileSource, master: MariaDBServer, *replicas: MariaDBServer, shards: int = 4
) -> None:
    """The shard map of the pair: every shard mastered by A, replicated to B (and C, for a
    second replica) (no password: a store logs in with ``APP_LOGIN``)."""
    names = "BCDE"[: len(replicas)]
    source.publish(
        "shards",
        {
            "version": 0,
            "shard_count": shards,
            "hosts": {
                "A": f"mysql://{master.address}",
                **{name: f"mysql://{r.address}" for name, r in zip(names, replicas, strict=True)},
            },
            "ranges": [{"range": [0, shards - 1], "master": "A", "replicas": list(names)}],
            "open": [[0, shards - 1]],
            "lookup_shards": shards,
        },
        author="setup",
        reason="a pair",
    )


def sharded_pair(
    master: MariaDBServer, *replicas: MariaDBServer, tmp_path: Path, caught_up: bool = True
) -> FileSource:
    """The pair's shard map in a file source under ``tmp_path``, its shards made on the
    master (as the site's user) and, if ``caught_up``, applied on the replicas."""
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, *replicas)
    store = app_store(source)
    init_shards(store)
    store.close()
    if caught_up:
        for replica in replicas:
            wait_caught_up(master, replica)
    return source


def app_store(source: ConfigSource) -> Store:
    """A store on the shard map in force, logged in as the site's user ``app``."""
    document = source.current("shards").document
    return Store(Topology.from_json(document), catalog=CATALOG, backend_options=APP_LOGIN)


def wait_caught_up(master: MariaDBServer, replica: MariaDBServer) -> None:
    """Until the replica has applied all the master wrote (the shards' DDL is slow to
    replay on a busy machine)."""
    with root(f"mysql://{replica.address}") as r, root(f"mysql://{master.address}") as m:
        assert r.wait_for(m.gtid_binlog_pos(), 120)


def kill_master(master: MariaDBServer, replica: MariaDBServer, timeout: float = 15) -> None:
    """``kill -9`` the master, then wait until its replica has noticed (its I/O thread no
    longer connected): until then an emergency failover rightly refuses, since a replica
    still sees the master."""
    master.halt(kill=True)
    deadline = time.monotonic() + timeout
    with root(f"mysql://{replica.address}") as r:
        while True:
            status = r.replica_status()
            if status is None or status.io_state != "Yes":
                return
            assert time.monotonic() < deadline, f"the replica still sees its master: {status}"
            time.sleep(0.05)
