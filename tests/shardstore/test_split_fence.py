"""A split's fence on real MariaDB replication: a process that missed the read-only map
cannot write the moving shards on the old host, and a write in flight on a shard that
stays is not failed by it; a process that missed a revert cannot read the copies it left
frozen, so it neither serves nor caches them."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from shardstore import ShardReadOnly, ShardUnavailable
from shardstore.cache import CachedStore
from shardstore.cache.readthrough import FILLING
from shardstore.control.plans import Plan
from shardstore.control.split import plan_split
from shardstore.control.split_revert import plan_split_revert
from toolkit.servers.mariadb import MariaDBServer

from .catalog import CACHE_POOLS
from .replication import app_store, root, sharded_pair, wait_caught_up
from .test_split import execute


def test_a_process_on_the_old_map_cannot_write_the_moving_shards_once_they_are_fenced(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path
) -> None:
    """A process that missed the read-only map (its ZooKeeper session expired, say) keeps
    writing by its old map: MySQL refuses its writes to the moving shards on the host, so
    none lands in a copy that cleanup drops; its other shards, and the undo, are untouched."""
    import MySQLdb

    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path, caught_up=False)
    stale = app_store(source)
    wait_caught_up(master, replica)
    slow = MySQLdb.connect(  # a slow write, its transaction open across the cut-over
        host=master.host, port=master.port, user="app", password="app-password"
    )
    slow.cursor().execute("""INSERT INTO db00003.notes (data) VALUES ('{"n": "slow"}')""")
    quick = MySQLdb.connect(  # a write in flight on a staying shard, done within the drain
        host=master.host, port=master.port, user="app", password="app-password"
    )
    quick.cursor().execute("""INSERT INTO db00000.notes (data) VALUES ('{"n": "quick"}')""")
    committed: list[Exception | None] = []

    def commit_soon() -> None:
        time.sleep(0.2)  # the fence has begun, and gives it DRAIN_SECONDS
        try:
            quick.commit()
            committed.append(None)
        except MySQLdb.Error as exc:
            committed.append(exc)

    plan = plan_split(source, host="A", author="ada", connect=root)
    execute(Plan("split", "to the read-only map", plan.steps[:4]), tmp_path)
    finishing = threading.Thread(target=commit_soon)
    finishing.start()
    plan.steps[4].run()  # the fence, while that write is in flight
    finishing.join()
    quick.close()
    assert committed == [None]  # not ended: it finished within the fence's drain

    with pytest.raises(MySQLdb.OperationalError):  # its session was ended: rolled back
        slow.commit()
    slow.close()
    with pytest.raises(ShardReadOnly, match="no longer takes writes"):
        stale.objects("note").create(3, {"n": "stale"})
    assert stale.objects("note").create(0, {"n": "staying"})  # a staying shard: written
    with root(f"mysql://{master.address}") as m:
        assert m.value("SELECT COUNT(*) FROM db00003.notes") == 0
        assert m.value("SELECT COUNT(*) FROM db00000.notes WHERE data LIKE '%quick%'") == 1
    with root(f"mysql://{replica.address}") as r:  # not replicated: B keeps the writes
        assert r.query("SELECT COUNT(*) AS n FROM mysql.db WHERE db = 'db00003'")[0]["n"] == 0

    assert plan.steps[4].undo is not None
    plan.steps[4].undo()
    assert stale.objects("note").create(3, {"n": "given back"})
    stale.close()


def test_a_process_on_the_split_map_reads_no_frozen_copy_once_the_split_is_reverted(
    pair: tuple[MariaDBServer, MariaDBServer], tmp_path: Path, memcached_pool: Any
) -> None:
    """A process that missed the revert (cut off from ZooKeeper, say) still reads the moved
    shards on the split's new master, whose copies nothing feeds once the revert has given
    them back: MySQL refuses it there from the revert's last publish on (a 503 to retry), so
    it serves no frozen value and fills no cache with one; the process on the map in force
    reads the newest value."""
    master, replica = pair
    source = sharded_pair(master, replica, tmp_path=tmp_path)
    execute(plan_split(source, host="A", author="ada", connect=root), tmp_path)
    pools = {name: memcached_pool(name) for name in CACHE_POOLS}
    pools["notes"].clear()  # one server for every pool: IDs repeat from test to test
    stale = CachedStore(app_store(source), pools)  # on the split's map, for good
    note = stale.objects("note").create(3, {"n": "before"})  # on B, streamed back to A
    assert stale.objects("note").get(note) == {"n": "before", "id": note}

    revert = plan_split_revert(source, split=3, author="ada", connect=root)
    *steps, rename = revert.steps  # the rename would hide the copies: the fence must not need it
    execute(Plan("split-revert", "up to the rename", steps), tmp_path)
    current = CachedStore(app_store(source), pools)  # on the map in force: A
    current.objects("note").update(note, {"n": "after"})
    with pytest.raises(ShardReadOnly, match="no longer serves it"):
        stale.objects("note").get(note)
    key = stale.objects("note").key(note)
    assert pools["notes"].get_many([key]).get(key, FILLING).startswith(FILLING)  # no value
    assert current.objects("note").get(note) == {"n": "after", "id": note}
    with pytest.raises(ShardReadOnly, match="no longer serves it"):  # a write reads first
        stale.objects("note").update(note, {"n": "stale"})

    rename.run()
    with pytest.raises(ShardUnavailable):
        stale.objects("note").get(note)
    assert current.objects("note").get(note) == {"n": "after", "id": note}
    for store in (stale, current):
        store.close()
