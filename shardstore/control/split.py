"""Split a host: its replica becomes the master of half of its shards (the seeds' "the
replica becomes responsible for some of the DBs"), and undo that, and clean up after it.

``plan_split(source, host=...)``, steps in order:

1. check the replica follows the host, healthy and caught up;
2. diff the moving shards on both at one GTID position (``diff``): every table's
   rows and checksum must match, or nothing changes;
3. publish the shard map with the moving shards read-only, and wait until every
   process follows it (its writes under the old map drained: ``fence``);
4. fence the moving shards on the host in MySQL itself: the site's account loses
   its writes on their databases there (``grant_fence.take_writes``), and its
   transactions that have written are given a second to end, then ended, so a process that
   missed the map (cut off from ZooKeeper, say) gets an error, never a write. The fence
   stays: from now on only replication writes the host's copies of the moving shards;
5. wait until the replica has applied all of the host's writes (GTID);
6. stop replication between the two; the replica writes in a GTID domain of its own
   (the split's number, recorded in the map the split publishes: ``domains``, which
   ``reopen`` sets again after a restart) and is writable;
7. start the reverse stream (``reverse_stream``): the host replicates the moving shards
   back from the replica, so that a revert is a cut-back of seconds;
8. publish the new ranges: the moving shards mastered by the replica. The
   read-only window (steps 3 to 8) is what the moving shards' users wait;
   the other shards are never stopped;
9. on the replica, rename the shards that stay on the host (``db00042`` ->
   ``db00042_split9``, 9 being the map version the split published): kept until
   ``cleanup 9`` drops them, never dropped in the same step.

If a step fails before 8 (or the operator stops the command), what was done is
undone (``plans.run``): the reverse stream is removed, the replica follows the host
again, the site's writes are given back, the map is published again without the
read-only window, and the host keeps every shard. Step 8 commits the split: a failure
after it leaves the split done and the rename to be run again.

``plan_split_revert(source, split=9)`` (split_revert.py) cuts back to the host, until
``cleanup 9`` has run.

``plan_cleanup(source, split=9)`` (split_cleanup.py) removes the reverse stream and drops
the host's copies of the moved shards and the renamed copies; the ``cleanup`` long job
does the same chunked by shard.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ..durability import of_master
from ..exceptions import InvalidTopology
from ..replicas import with_replicas
from ..topology import database_name
from . import documents, reverse_stream
from .config_source import ConfigSource, NotPublished, Revision
from .diff import diff_hosts
from .failover import check_replica_step, master_and_replicas
from .grant_fence import fence_step
from .mysql_hosts import HostError, MySQLHost, endpoint
from .plans import Plan, Step
from .publish import FOLLOW_SECONDS, followed_step, publish_step

Connect = Callable[[str], MySQLHost]
T = TypeVar("T")
SPLIT = "split {host} onto {replica}"  # the reason of the map a split publishes


def halves(ranges: list[dict[str, Any]]) -> tuple[list[list[int]], list[list[int]]]:
    """The host's ranges cut in two by shard count: (staying, moving) as [first, last]s."""
    shards = [s for r in ranges for s in range(r["range"][0], r["range"][1] + 1)]
    if len(shards) < 2:
        raise InvalidTopology("a host needs two shards or more to be split")
    keep = set(shards[: len(shards) // 2])
    staying: list[list[int]] = []
    moving: list[list[int]] = []
    for shard in shards:
        runs = staying if shard in keep else moving
        if runs and runs[-1][1] == shard - 1:
            runs[-1][1] = shard
        else:
            runs.append([shard, shard])
    return staying, moving


def shards_in(runs: list[list[int]]) -> list[int]:
    return [s for first, last in runs for s in range(first, last + 1)]


def spans(runs: list[list[int]]) -> str:
    return ", ".join(f"{a}..{b}" for a, b in runs)


def plan_split(
    source: ConfigSource,
    *,
    host: str,
    author: str,
    to: str | None = None,
    connect: Connect = MySQLHost,
    max_lag: int = 10,
    catch_up_seconds: float = 30.0,
    follow_seconds: float = FOLLOW_SECONDS,
    base: Revision | None = None,
) -> Plan:
    """The plan to hand the second half of ``host``'s shards to a replica (``to``, else the
    first the map names; ``base``: the map to plan from, as in ``plan_failover``)."""
    current = base or source.current(documents.SHARDS)
    document = current.document
    mastered, named = master_and_replicas(document, host, to)
    replica = to or named[0]
    kept = [name for name in named if name != replica]  # the host keeps its other replicas
    addresses = document["hosts"]
    host_address, replica_address = addresses[host], addresses[replica]
    staying, moving = halves(mastered)
    others = [r for r in document["ranges"] if r["master"] != host]
    durability = of_master(document, host)  # both halves keep it
    policy = durability.entry()
    split_ranges = sorted(
        [*others]
        + [with_replicas({"range": run, "master": host, **policy}, kept) for run in staying]
        + [{"range": run, "master": replica, **policy} for run in moving],
        key=lambda r: r["range"][0],
    )
    frozen = documents.validate(documents.SHARDS, {**document, "read_only": moving})
    split_version = current.version + 2
    # The replica writes in a GTID domain of its own, the split's number: never used before.
    domains = {**document.get("domains", {}), replica: split_version}
    final = documents.validate(
        documents.SHARDS, {**document, "ranges": split_ranges, "domains": domains}
    )
    final.pop("read_only", None)
    suffix = f"_split{split_version}"
    reason = SPLIT.format(host=host, replica=replica)
    frozen_revision = Revision(documents.SHARDS, current.version + 1, frozen, author, "", reason)

    def diff() -> str:
        report = diff_hosts(
            connect, host_address, replica_address, shards_in(moving), names=(host, replica)
        )
        if not report.clean:
            raise HostError(report.text())
        return report.text()

    freeze = publish_step(
        source,
        current,
        frozen,
        author=author,
        reason=f"{reason}: read-only window",
        change=f"shards {spans(moving)} read-only",
        hosts=(host, replica),
    )
    followed = followed_step(
        source, documents.SHARDS, current.version + 1, hosts=(host, replica), timeout=follow_seconds
    )

    moving_databases = [database_name(shard) for shard in shards_in(moving)]

    def catch_up() -> str:
        with connect(host_address) as m:
            position = m.gtid_binlog_pos()
        with connect(replica_address) as r:
            if not r.wait_for(position, catch_up_seconds):
                raise HostError(f"{replica} did not apply {position} in {catch_up_seconds:g}s")
        return f"{replica} has applied {position or 'everything'}"

    def separate() -> str:
        # The replica is a master with no replica now: semi-sync armed for the one rebuilt
        # later. So is the host unless another replica of it acknowledges: armed first, it
        # stops waiting when its replica leaves, else the commits in flight then (and all
        # after them, its reverse stream's included) wait for that replica's ack for ever.
        acknowledging = [name for name in kept if _acknowledges(connect, addresses[name], host_address)]  # fmt: skip
        with connect(replica_address) as r, connect(host_address) as m:
            if not acknowledging:
                m.arm_semi_sync(durability)
            r.stop_replicating()
            domain = reverse_stream.writing_domain(m, r, split_version)
            r.kill_client_sessions()  # a session opened before writes in the host's domain
            r.arm_semi_sync(durability)  # the new range has the parent's policy
            r.set_read_only(False)
        armed = f"on {replica} ({host}'s acknowledged by {', '.join(acknowledging)})" if acknowledging else "on both"  # fmt: skip
        return f"{replica} replicates from no one and is writable (GTID domain {domain}); semi-sync armed {armed}"  # fmt: skip

    def rejoin() -> str:
        """The pair as before ``separate``: no process wrote to the replica meanwhile (the
        moving shards are read-only in the map until the final publish)."""
        with connect(replica_address) as r, connect(host_address) as m:
            r.set_semi_sync(False)
            r.set_read_only(True)
            r.replicate_from(m)
            m.set_semi_sync(True, durability)
        return f"{replica} read_only, replicating from {host} again"

    def reverse() -> str:
        with connect(host_address) as m, connect(replica_address) as r:
            return reverse_stream.start(m, r, split_version, shards_in(moving))

    def unreverse() -> str:
        with connect(host_address) as m:
            gone = reverse_stream.stop(m, split_version)
        return f"reverse stream {'removed' if gone else 'was not there'}"

    def rename() -> str:
        left = rename_shards(connect, replica_address, shards_in(staying), suffix)
        return f"{left} shards renamed *{suffix} on {replica}: `cleanup {split_version}` drops them"

    return Plan(
        "split",
        f"split {host}: shards {spans(moving)} to {replica}, {spans(staying)} stay",
        [
            check_replica_step(connect, document, host, replica, max_lag=max_lag),
            Step(
                f"diff shards {spans(moving)} on {host} and {replica} (rows, checksums)",
                (host, replica),
                diff,
            ),
            freeze,
            followed,
            fence_step(connect, host, host_address, moving_databases, spans(moving)),
            Step(
                f"wait until {replica} has applied all of {host}'s writes (GTID)",
                (replica,),
                catch_up,
            ),
            Step(
                f"stop replication from {host} to {replica}; {replica} writable",
                (host, replica),
                separate,
                rejoin,
            ),
            Step(
                f"replicate shards {spans(moving)} back from {replica} to {host}"
                f" ({reverse_stream.connection(split_version)})",
                (host, replica),
                reverse,
                unreverse,
            ),
            publish_step(
                source,
                frozen_revision,
                final,
                author=author,
                reason=reason,
                change=f"shards {spans(moving)} mastered by {replica}",
                hosts=(host, replica),
                commits=True,
            ),
            Step(
                f"rename the shards that stay on {host} to db*{suffix} on {replica}",
                (replica,),
                rename,
            ),
        ],
        {
            "host": host,
            "replica": replica,
            "moving": moving,
            "staying": staying,
            "split": split_version,
            "base": current.version,
        },
    )


def _acknowledges(connect: Connect, address: str, master_address: str) -> bool:
    """Whether the server at ``address`` replicates from ``master_address``, healthy, and
    acknowledges its commits."""
    try:
        with connect(address) as server:
            status = server.replica_status()
            source = "{}:{}".format(*endpoint(master_address))
            return status is not None and status.healthy and status.source == source and server.acknowledges()  # fmt: skip
    except HostError:
        return False


#: Connections a step that makes, renames or drops thousands of databases spreads them
#: over: each statement waits on several fsyncs, so a host's 2,048 shards take minutes on
#: one connection (a whole host dropped: 126 s on one, 8 s on 16).
DDL_CONNECTIONS = 16


def in_parallel(
    connect: Connect, address: str, items: list[T], work: Callable[[MySQLHost, list[T]], int]
) -> int:
    """``work`` on ``DDL_CONNECTIONS`` slices of ``items``, each on a connection of its own
    to ``address``; the sum of what each returns."""

    def one(part: list[T]) -> int:
        if not part:
            return 0
        with connect(address) as host:
            return work(host, part)

    with ThreadPoolExecutor(DDL_CONNECTIONS) as pool:
        return sum(pool.map(one, [items[i::DDL_CONNECTIONS] for i in range(DDL_CONNECTIONS)]))


def drop_databases(host: MySQLHost, databases: list[str]) -> int:
    for db in databases:
        host.query(f"DROP DATABASE `{db}`")
    return len(databases)


def rename_shards(connect: Connect, address: str, shards: list[int], suffix: str) -> int:
    """Move each shard's tables to ``db<shard><suffix>`` (same server: a rename, no copy),
    unlogged: a reverse stream from this host must not carry it. Returns how many shards
    were renamed (those already renamed are skipped)."""
    return in_parallel(connect, address, shards, lambda host, part: _rename(host, part, suffix))


def _rename(host: MySQLHost, shards: list[int], suffix: str) -> int:
    present = host.databases()
    renamed = 0
    host.query("SET SESSION sql_log_bin = 0")
    for shard in shards:
        db = database_name(shard)
        if db not in present:
            continue
        tables = [next(iter(r.values())) for r in host.query(f"SHOW TABLES FROM {db}")]
        host.query(f"CREATE DATABASE IF NOT EXISTS {db}{suffix}")
        if tables:
            host.query("RENAME TABLE " + ", ".join(f"{db}.{t} TO {db}{suffix}.{t}" for t in tables))
        host.query(f"DROP DATABASE {db}")
        renamed += 1
    return renamed


def split_revision(source: ConfigSource, split: int) -> tuple[Revision, Revision]:
    """The map a split published as ``split`` and the one before its read-only window."""
    try:
        after, before = (source.revision(documents.SHARDS, v) for v in (split, split - 2))
    except NotPublished:
        raise InvalidTopology(f"shard map v{split} was not published by a split") from None
    if not after.reason.startswith("split "):
        raise InvalidTopology(f"shard map v{split} was not published by a split: {after.reason}")
    return after, before
