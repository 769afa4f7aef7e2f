"""A master whose replica stops receiving acknowledges no write (semi-sync with no fallback
to asynchronous), and the site's write does not wait for it forever: it fails after the
backend's read timeout, unacknowledged, and the server ends the session the site gave up
on (its connection, its row locks). The cache forgets what the write touched, whatever
became of it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from shardstore import ShardUnavailable, Store, Topology
from shardstore.backends import acknowledgements
from shardstore.cache import CachedStore, LocalPool
from shardstore.cache.local_pool import LocalMemory
from shardstore.control.mysql_hosts import MySQLHost
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CACHE_POOLS, CATALOG
from .replication import APP_LOGIN, root, sharded_pair, wait_caught_up


def impatient_store(master: MariaDBServer, replica: MariaDBServer, tmp_path: Path) -> Store:
    """A store on the pair's shard map whose statements wait 2 s for an answer."""
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    topology = Topology.from_json(source.current("shards").document)
    return Store(topology, catalog=CATALOG, backend_options={**APP_LOGIN, "read_timeout": 2})


def test_a_write_the_replica_cannot_acknowledge_fails_after_the_read_timeout(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    store = impatient_store(master, replica, tmp_path)
    store.objects("note").create(1, {"n": "before"})  # acknowledged at once

    with root(f"mysql://{replica.address}") as r:
        r.stop_receiving()
    began = time.monotonic()
    with pytest.raises(ShardUnavailable):
        store.objects("note").create(1, {"n": "unacknowledged"})
    waited = time.monotonic() - began
    assert 1.5 < waited < 30, waited  # the timeout, not forever, and not at once
    with root(f"mysql://{master.address}") as m:
        assert m.value("SELECT @@global.rpl_semi_sync_master_enabled") == 1  # no fallback
        assert waiting_sessions(m) == []  # ended server-side, not left waiting for an ack
    with root(f"mysql://{replica.address}") as r:
        r.query("START SLAVE IO_THREAD")
    wait_caught_up(master, replica)
    time.sleep(acknowledgements.HOLD)  # its writes refused meanwhile (the next test)
    store.objects("note").create(1, {"n": "after"})
    store.close()


def test_once_a_write_waited_in_vain_the_hosts_writes_are_refused_at_once_until_a_replica_is_back(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """Each write would hold its thread for the read timeout: after the first, they are
    refused at once for a while, and the host's reads go on; once the replica acknowledges
    again, the write let through to try commits, and the host takes writes again."""
    master, replica = pair
    store = impatient_store(master, replica, tmp_path)
    note = store.objects("note").create(1, {"n": "before"})
    with root(f"mysql://{replica.address}") as r:
        r.stop_receiving()
    with pytest.raises(ShardUnavailable):
        store.objects("note").create(1, {"n": "waited in vain"})
    for attempt in range(5):
        began = time.monotonic()
        with pytest.raises(ShardUnavailable, match="no replica sends: writes refused"):
            store.objects("note").create(1, {"n": f"refused {attempt}"})
        assert time.monotonic() - began < 0.5
        assert store.objects("note").get(note)["n"] == "before"  # reads go on
    with root(f"mysql://{replica.address}") as r:
        r.query("START SLAVE IO_THREAD")
    wait_caught_up(master, replica)
    time.sleep(acknowledgements.HOLD)  # then one write is let through to try: it commits
    store.objects("note").create(1, {"n": "acknowledged again"})
    store.objects("note").create(1, {"n": "and the next"})
    with root(f"mysql://{master.address}") as m:
        assert waiting_sessions(m) == []
    store.close()


def test_a_write_given_up_on_is_forgotten_by_the_cache_whatever_became_of_it(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    store = impatient_store(master, replica, tmp_path)
    memory = LocalMemory()
    cached = CachedStore(store, {name: LocalPool(name, memory) for name in CACHE_POOLS})
    note = cached.objects("note").create(1, {"n": "before"})
    assert cached.objects("note").get(note)["n"] == "before"  # cached

    with root(f"mysql://{replica.address}") as r:
        r.stop_receiving()
    with pytest.raises(ShardUnavailable):
        cached.objects("note").update(note, {"n": "given up on"})
    # Committed on the master (AFTER_SYNC: in its binary log before the wait), never
    # acknowledged: served as the master has it, not as the cache had it.
    assert cached.objects("note").get(note)["n"] == "given up on"
    with root(f"mysql://{replica.address}") as r:
        r.query("START SLAVE IO_THREAD")
    store.close()


def waiting_sessions(master: MySQLHost) -> list[object]:
    """The store's sessions on the master still waiting for a replica's acknowledgement."""
    rows = master.query("SELECT id, state FROM information_schema.processlist WHERE user = 'app'")
    return [row for row in rows if "semi-sync" in str(row["state"] or "").lower()]
