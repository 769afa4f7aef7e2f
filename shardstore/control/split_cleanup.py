"""After a split: remove its reverse stream and drop the copies it left (the host's copies
of the shards that moved, and those it, or its revert, renamed away), after which it cannot
be reverted. ``plan_cleanup`` does it on the split's two hosts; the ``cleanup`` long job
(``job start cleanup --param split=9``) does the same chunked by shard, on every MySQL host
of the map, for when there are many.

A shard's plain database (``db00042``) is dropped on the split's host only if that host is
not its master in the map in force: after a revert, it is the live one.

Those copies are the last other copy of the moved shards, so a cleanup (and each chunk of
the job) is refused unless every range now holding them has a master that answers and a
backup in the store taken since the split (``kept_elsewhere``); ``without_backup`` drops
them anyway, and the journal says so."""

from __future__ import annotations

import datetime
from collections.abc import Callable

from ..backups.manifest import manifests
from ..backups.store import BackupStore
from ..exceptions import InvalidTopology
from ..jobs import Chunk, JobContext, JobError, JobKind, Params, Summary, register
from ..topology import Topology, database_name
from . import documents, reverse_stream
from .config_source import ConfigSource
from .emergency_checks import answers
from .grant_fence import fenced, give_writes_back
from .mysql_hosts import MySQLHost
from .plans import Plan, Step
from .split import Connect, drop_databases, in_parallel, split_revision


def plan_cleanup(
    source: ConfigSource,
    *,
    split: int,
    author: str,
    connect: Connect = MySQLHost,
    store: BackupStore | None = None,
    without_backup: bool = False,
) -> Plan:
    """The plan to remove what split ``split`` left behind (after which it cannot be
    reverted); InvalidTopology when a range holding the moved shards has no backup since
    the split in ``store``, or a master that does not answer (unless ``without_backup``)."""
    after, _ = split_revision(source, split)
    words = after.reason.split()
    host, replica = words[1], words[3]
    current = Topology.from_json(source.current(documents.SHARDS).document)
    every = list(range(current.shard_count))
    moved = [s for r in after.document["ranges"] if r["master"] == replica for s in range(r["range"][0], r["range"][1] + 1)]  # fmt: skip
    since = datetime.datetime.fromisoformat(after.published_at.replace("Z", "+00:00")).timestamp()
    kept = "dropped with no backup (--without-backup)" if without_backup else kept_elsewhere(current, moved, connect, store, since=since, split=split)  # fmt: skip

    def unstream() -> str:
        with connect(current.hosts[host]) as m:
            gone = reverse_stream.stop(m, split)
        return f"{reverse_stream.connection(split)} {'removed' if gone else 'was gone'} on {host}"

    def drop(name: str) -> Callable[[], str]:
        def run() -> str:
            dropped = drop_copies(connect, current.hosts[name], name, current, split, every)
            return f"{dropped} databases dropped on {name}"

        return run

    return Plan(
        "cleanup",
        f"remove the reverse stream and the shard copies split {split} left on {host} and {replica}",
        [
            Step(f"stop and remove {reverse_stream.connection(split)} on {host}", (host,), unstream),
            *(Step(f"drop the copies split {split} left on {name}", (name,), drop(name)) for name in (host, replica)),
        ],
        {"split": split, "rerunnable": True, "kept": kept, "store": store.url if store else None, "without_backup": without_backup},  # every drop can run again: resume finishes a killed run
    )  # fmt: skip


def kept_elsewhere(topology: Topology, shards: list[int], connect: Connect, store: BackupStore | None, *, since: float | None, split: int) -> str:  # fmt: skip
    """Where else ``shards`` are kept: each range holding them has a master that answers
    and a backup in ``store`` that ended after ``since``; InvalidTopology otherwise."""
    if store is None:
        raise InvalidTopology("no backup store is set (PINBOARD_BACKUP_STORE, or --store): the copies a split left are dropped only once a backup of the moved shards' range exists (--without-backup to drop them anyway)")  # fmt: skip
    held = sorted({topology.range_of(shard) for shard in shards}, key=lambda r: r.first)
    found = manifests(store)
    said = []
    for r in held:
        span = f"{r.first}-{r.last}"
        if not answers(connect, r.master, topology.hosts[r.master]):
            raise InvalidTopology(f"{r.master}, the master of shards {span}, does not answer: the copies split {split} left may be the only other ones; no cleanup")  # fmt: skip
        backups = [m for m in found if span in [x.strip() for x in m.ranges.split(",")] and (since is None or m.ended > since)]  # fmt: skip
        if not backups:
            raise InvalidTopology(f"no backup of shards {span} since split {split} in {store.url}: take one first (shardstore backup take {span})")  # fmt: skip
        said.append(f"{span} on {r.master}, backed up as {backups[-1].host}/{backups[-1].name}")
    return "; ".join(said)


def drop_copies(
    connect: Connect, address: str, name: str, topology: Topology, split: int, shards: list[int]
) -> int:
    """Drop on host ``name`` what split ``split`` left of ``shards``: the copies it and its
    revert renamed away, and the databases the host gave up (fenced there, and neither
    mastered nor replicated by it in ``topology``), unless another split's reverse stream
    still writes them. Gives the fence on them back (they may come back one day). How many."""
    names = {database_name(s): s for s in shards}
    with connect(address) as h:
        present = h.databases()
        wanted = [db for db in present if db.endswith((f"_split{split}", f"_reverted{split}")) and db.split("_")[0] in names]  # fmt: skip
        given_up = [
            db
            for db, s in names.items()
            if db in present and name not in (topology.range_of(s).master, *topology.range_of(s).replicas)
        ]  # fmt: skip
        streamed = reverse_stream.streamed(h)
        wanted += [db for db in fenced(h, given_up) if not any(p.fullmatch(db) for p in streamed)]
        in_parallel(connect, address, sorted(wanted), drop_databases)
        give_writes_back(h, sorted({db.split("_")[0] for db in wanted}))
    return len(wanted)


def _cleanup_chunk(context: JobContext, chunk: Chunk, params: Params) -> Summary:
    """Remove split ``params["split"]``'s reverse stream, and drop the copies it (and its
    revert) left of these shards, on every MySQL host of the map: a drop that already
    happened is skipped."""
    split = params.get("split")
    if type(split) is not int or split < 1:
        raise JobError("cleanup needs split=N, the shard-map version the split published")
    connect = context.mysql or MySQLHost
    topology = context.store.topology
    if not params.get("without_backup"):
        try:
            kept_elsewhere(topology, list(chunk.shards), connect, context.backups, since=None, split=split)  # fmt: skip
        except InvalidTopology as exc:
            raise JobError(str(exc)) from None
    dropped = 0
    for name, address in topology.hosts.items():
        if not address.startswith("mysql://"):
            continue
        with connect(address) as host:
            reverse_stream.stop(host, split)
        dropped += drop_copies(connect, address, name, topology, split, list(chunk.shards))
    return {"dropped": dropped}


register(
    JobKind(
        "cleanup",
        "Drop the shard copies a split (and its revert) renamed, after which it cannot be reverted",
        _cleanup_chunk,
        params={
            "split": "the shard-map version the split published",
            "without_backup": "1: drop the copies though no backup of their range exists",
        },
        destructive=True,
    )
)
