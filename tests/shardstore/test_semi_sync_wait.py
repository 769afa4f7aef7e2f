"""A master whose replica stops receiving acknowledges no write (semi-sync with no fallback
to asynchronous), and the site's write does not wait for it forever: it fails after the
backend's read timeout, unacknowledged, and lands once the replica is back."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from shardstore import ShardUnavailable, Store, Topology
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CATALOG
from .replication import APP_LOGIN, root, sharded_pair, wait_caught_up


def test_a_write_the_replica_cannot_acknowledge_fails_after_the_read_timeout(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path)
    topology = Topology.from_json(source.current("shards").document)
    store = Store(topology, catalog=CATALOG, backend_options={**APP_LOGIN, "read_timeout": 2})
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
    with root(f"mysql://{replica.address}") as r:
        r.query("START SLAVE IO_THREAD")
    wait_caught_up(master, replica)
    store.objects("note").create(1, {"n": "after"})
    store.close()
