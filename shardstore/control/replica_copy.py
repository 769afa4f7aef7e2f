"""Where a rebuilt replica's copy comes from (``rebuild``'s copy step): the newest backup of
its master's ranges, restored with the archive into a scratch server on this machine
(``backups/scratch.PointInTime``, to its last archived write), as Pinterest builds every
new host, so that the master serves nothing but its binary log from there on; or, with no
backup fresh enough (``FRESH_SECONDS``) or no store, one consistent snapshot of the master
itself (``snapshot_copy``), throttled by its load. Either way the copy carries its GTID
position, from which the replica then follows the master."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ..backups.binlogs import chain
from ..backups.manifest import Manifest, manifests
from ..backups.physical import BackupError
from ..backups.scratch import PointInTime
from ..backups.store import BackupStore, BackupStoreError
from .failover import Connect
from .mysql_hosts import MySQLHost
from .snapshot_copy import Throttle, copy_databases, shard_databases
from .split import drop_databases, in_parallel

#: The oldest backup a replica is built from (seconds): a day's, and a little more.
FRESH_SECONDS = 26 * 3600


def fresh_backup(store: BackupStore | None, spans: list[str], master: str, *, clock: Callable[[], float] = time.time) -> Manifest | None:  # fmt: skip
    """The newest backup holding every range of ``spans`` (``FIRST-LAST``) that is fresh and
    that ``master``'s archive continues without a gap; None if there is none."""
    if store is None:
        return None
    try:
        found = manifests(store)
    except BackupStoreError:
        return None
    for made in reversed(found):
        held = {span.strip() for span in made.ranges.split(",")}
        if set(spans) <= held and made.ended > clock() - FRESH_SECONDS:
            try:
                chain(store, master, made.gtid)
            except (BackupError, BackupStoreError):
                continue
            return made
    return None


@dataclass(frozen=True)
class Copied:
    said: str
    gtid: str


def copy_onto(
    connect: Connect,
    master_address: str,
    host: MySQLHost,
    *,
    backup: tuple[BackupStore, Manifest, str] | None,
    max_threads_running: int,
    parallel: int,
    say: Callable[[str], None],
) -> Copied:
    """Wipe ``host`` and copy the shard databases onto it, from ``backup`` (a store, one of
    its backups and the master's name, whose archive is replayed) or from the master; its
    ``gtid_slave_pos`` set to the copy's position."""
    wipe_host(connect, host)  # a re-run starts from scratch
    started = time.monotonic()
    if backup is None:
        with connect(master_address) as m, connect(master_address) as busy:
            databases = shard_databases(m)
            say(f"copying {len(databases)} databases from the master, {parallel} streams")
            done = copy_databases(m, host, databases, throttle=Throttle(busy, max_threads_running), parallel=parallel, say=say)  # fmt: skip
        source = f"the master's commits held {done.held:.2f}s for one snapshot; paused {done.paused:.1f}s for its load"  # fmt: skip
    else:
        store, made, master = backup
        restored = PointInTime(store, made, master, to_time=None, to_gtid=None)
        try:
            server = restored.server()
            with server.connect() as s, server.connect() as busy:
                databases = shard_databases(s)
                say(f"copying {len(databases)} databases from backup {made.host}/{made.name} and {len(restored.logs)} archived logs, {parallel} streams")  # fmt: skip
                done = copy_databases(s, host, databases, throttle=Throttle(busy), parallel=parallel, say=say)  # fmt: skip
        finally:
            restored.drop()
        source = f"from backup {made.host}/{made.name} and {master}'s archive: nothing read from the master"  # fmt: skip
    host.query("SET GLOBAL gtid_slave_pos = %s", (done.gtid,))
    said = f"{done.databases} databases ({done.bytes / 1e6:.1f} MB) copied in {time.monotonic() - started:.1f}s at {done.gtid} ({source})"  # fmt: skip
    return Copied(said, done.gtid)


def wipe_host(connect: Connect, h: MySQLHost) -> int:
    """Make ``h`` an empty, read-only server replicating from no one, with no GTID history
    (the copy brings its own); how many shard databases were dropped."""
    h.stop_replicating()
    h.set_semi_sync(False)  # as a replica it must not wait for acknowledgements
    h.set_read_only(True)
    dropped = in_parallel(connect, h.address, shard_databases(h), _drop_unlogged)
    h.query("RESET MASTER")
    h.query("SET GLOBAL gtid_slave_pos = ''")
    return dropped


def _drop_unlogged(h: MySQLHost, databases: list[str]) -> int:
    """Drop ``databases`` on ``h`` alone: a server that still replicates from ``h`` (a
    split's reverse stream, before its cleanup) must not drop its own copies."""
    h.query("SET SESSION sql_log_bin = 0")
    return drop_databases(h, databases)
