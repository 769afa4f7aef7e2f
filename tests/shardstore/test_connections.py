"""Connection reuse: pooled connections serve many threads and survive what a server does to them."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from shardstore import ShardUnavailable, Store, compose

from .catalog import CATALOG
from .conftest import Backend, two_host_topology


@pytest.fixture
def store(plain_store: Store) -> Store:
    """Connection handling is the plain store's backends'."""
    return plain_store


def test_connections_are_reused(store: Store) -> None:
    notes = store.objects("note")
    note = notes.create(3, {})
    backend = store.backend(3)
    connects = 0
    original = backend._connect

    def counting_connect(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal connects
        connects += 1
        return original(*args, **kwargs)

    backend._connect = counting_connect  # type: ignore[method-assign]
    for _ in range(20):
        assert notes.get(note) is not None
    assert connects <= 1


def test_a_connection_the_server_closed_is_replaced(backend: Backend, store: Store) -> None:
    """After a server restart or wait_timeout, idle pooled connections are dead; a read
    on a healthy server must not fail with ShardUnavailable because of them."""
    if backend.kind != "mysql":
        pytest.skip("only a MySQL server closes a client's idle connection")

    notes = store.objects("note")
    note = notes.create(3, {"title": "t"})
    _kill_idle_connections(store, 3)
    assert notes.get(note) == {"id": note, "title": "t"}


def test_a_write_on_a_connection_the_server_closed(backend: Backend, store: Store) -> None:
    """The same for writes: the first create, lookup insert or hard delete after the server
    closed the pool's idle connections must not report a healthy host as unavailable
    (and must not run twice)."""
    if backend.kind != "mysql":
        pytest.skip("only a MySQL server closes a client's idle connection")
    notes = store.objects("note")
    logins = store.lookup("login")
    shard = logins.shard_of("grace")
    notes.create(shard, {})  # a pooled connection to the host of the key's shard

    _kill_idle_connections(store, shard)
    note = notes.create(shard, {"title": "after"})
    assert notes.get(note) == {"id": note, "title": "after"}
    with store.session(shard) as session:
        assert session.query("SELECT COUNT(*) FROM {db}.notes")[0][0] == 2

    _kill_idle_connections(store, shard)
    logins.insert("grace", compose(shard, 3, 1))
    assert logins.get("grace") == compose(shard, 3, 1)

    _kill_idle_connections(store, shard)
    assert notes.delete(note, hard=True) is True


def _kill_idle_connections(store: Store, shard: int) -> None:
    """Have the server close every idle pooled connection of ``shard``'s host, as a
    restart or wait_timeout would."""
    import MySQLdb

    # Put a few connections in the pool first.
    barrier = threading.Barrier(4)

    def hold() -> None:
        with store.session(shard) as session:
            barrier.wait()
            session.query("SELECT 1")

    threads = [threading.Thread(target=hold) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    backend = store.backend(shard)
    pooled = [c for conns in backend._pool._idle.values() for c in conns]  # type: ignore[attr-defined]
    assert pooled, "the pool kept no idle connection"
    admin = MySQLdb.connect(**backend._params)  # type: ignore[attr-defined]
    try:
        for connection in pooled:
            admin.cursor().execute(f"KILL {int(connection.thread_id())}")
    finally:
        admin.close()


def test_a_host_address_without_a_user_logs_in_with_the_mysql_login(
    mysql_schema: Any, mariadb_server: Any
) -> None:
    """A shard map with no password in it (as kept in ZooKeeper): the login comes from the
    store's ``mysql_login`` option (a wrong one is refused: without the option the store
    would have logged in as root, who has no password on the test server)."""
    import MySQLdb

    admin = mysql_schema.connection.cursor()
    admin.execute("CREATE USER IF NOT EXISTS 'site'@'%' IDENTIFIED BY 'site-password'")
    admin.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON `db%`.* TO 'site'@'%'")
    bare = f"mysql://{mariadb_server.host}:{mariadb_server.port}"
    topology = two_host_topology(bare, bare)

    store = Store(topology, backend_options={"mysql_login": "site:site-password"}, catalog=CATALOG)
    try:
        account = store.objects("account").create(3, {"login": "no-password-in-the-map"})
        assert store.objects("account").get(account)["login"] == "no-password-in-the-map"
    finally:
        store.close()

    wrong = Store(topology, backend_options={"mysql_login": "site:wrong"}, catalog=CATALOG)
    try:
        with pytest.raises((ShardUnavailable, MySQLdb.OperationalError)):
            wrong.objects("account").get(account)
    finally:
        wrong.close()
