"""A MySQL host holds at most ``max_sessions`` of a process's threads (the bulkhead): a
thread that finds the host's share taken gives up with the shard unavailable after a short
wait, another host's sessions go on meanwhile, and a thread nesting sessions on one host
counts once. (SQLite hosts have none: a file of this machine does not hang.)"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shardstore import ShardUnavailable, Store, init_shards
from shardstore.backends.bulkhead import WAIT
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CATALOG
from .conftest import two_host_topology
from .replication import APP_LOGIN, root, start_servers


@pytest.fixture
def servers() -> Iterator[list[MariaDBServer]]:
    """Two writable MariaDB servers, each a host of its own."""
    started = start_servers(2)
    try:
        for server in started:
            with root(f"mysql://{server.address}") as db:
                db.set_read_only(False)
        yield started
    finally:
        for server in started:
            server.stop()


def test_a_host_holds_its_share_of_threads_and_no_more(servers: list[MariaDBServer]) -> None:
    a, b = (f"mysql://{server.address}" for server in servers)
    topology = two_host_topology(a, b)
    options = {**APP_LOGIN, "max_sessions": 1}
    store = Store(topology, catalog=CATALOG, backend_options=options)
    init_shards(store)
    note_a, note_b = (store.objects("note").create(shard, {"n": shard}) for shard in (1, 9))
    held, done = threading.Event(), threading.Event()

    def hang_on_a() -> None:  # as a thread waiting on a hung host would
        with store.backend(1).session(1):
            held.set()
            done.wait(30)

    hanging = threading.Thread(target=hang_on_a)
    hanging.start()
    try:
        assert held.wait(10)
        began = time.monotonic()
        with pytest.raises(ShardUnavailable, match="busy: 1 sessions of this process wait"):
            store.objects("note").get(note_a)
        assert WAIT * 0.9 < time.monotonic() - began < WAIT + 5  # waited, then gave up
        assert store.objects("note").get(note_b)["n"] == 9  # the other host serves on
    finally:
        done.set()
        hanging.join()
    assert store.objects("note").get(note_a)["n"] == 1  # its place given back

    # One thread nesting a read inside a write on the host takes one place, not two.
    with store.backend(1).session(1, write=True), store.backend(1).session(1) as inner:
        assert inner.query("SELECT 1") == [(1,)]
    store.close()


def test_writes_leave_one_session_of_the_host_to_its_reads(servers: list[MariaDBServer]) -> None:
    """A master whose commits hang holds at most its share less one of the process's
    threads: the reads of its shards, which wait for no acknowledgement, keep one."""
    a, b = (f"mysql://{server.address}" for server in servers)
    store = Store(two_host_topology(a, b), catalog=CATALOG, backend_options={**APP_LOGIN, "max_sessions": 2})  # fmt: skip
    init_shards(store)
    note = store.objects("note").create(1, {"n": 1})
    held, done = threading.Event(), threading.Event()

    def hang_writing_on_a() -> None:  # as a commit waiting for an acknowledgement would
        with store.backend(1).session(1, write=True):
            held.set()
            done.wait(30)

    hanging = threading.Thread(target=hang_writing_on_a)
    hanging.start()
    try:
        assert held.wait(10)
        with pytest.raises(ShardUnavailable, match="busy: 1 writes of this process wait"):
            store.objects("note").update(note, {"n": 2})
        with pytest.raises(ShardUnavailable, match="busy: 1 writes of this process wait"):
            store.objects("note").create(1, {"n": 4})  # one autocommit INSERT is a write too
        assert store.objects("note").get(note)["n"] == 1  # the host's reads go on

        # One waiting for a write's place keeps no session's place from the reads meanwhile.
        store.backend(1).bulkhead.wait = 10.0  # type: ignore[union-attr]
        refused: list[Exception] = []

        def create() -> None:
            try:
                store.objects("note").create(1, {"n": 5})
            except ShardUnavailable as error:
                refused.append(error)

        waiting = threading.Thread(target=create)
        waiting.start()
        time.sleep(0.5)  # (if it has not begun to wait yet, the read has nothing to wait for)
        assert store.objects("note").get(note)["n"] == 1
        assert waiting.is_alive()  # the read did not wait for it to give up
    finally:
        done.set()
        hanging.join()
    waiting.join()
    assert [str(e) for e in refused] == []  # it got the place the hung write gave back
    store.objects("note").update(note, {"n": 3})  # its place given back
    assert store.objects("note").get(note)["n"] == 3
    store.close()


def test_a_sqlite_host_has_no_bulkhead(tmp_path: Path) -> None:
    topology = two_host_topology(f"sqlite://{tmp_path / 'a'}", f"sqlite://{tmp_path / 'b'}")
    store = Store(topology, catalog=CATALOG, backend_options={"max_sessions": 1})
    assert store.backend(1).bulkhead is None
    store.close()
