"""After a split: remove its reverse stream and drop the copies it left (the host's copies
of the shards that moved, and those it, or its revert, renamed away), after which it cannot
be reverted. ``plan_cleanup`` does it on the split's two hosts; the ``cleanup`` long job
(``job start cleanup --param split=9``) does the same chunked by shard, on every MySQL host
of the map, for when there are many.

A shard's plain database (``db00042``) is dropped on the split's host only if that host is
not its master in the map in force: after a revert, it is the live one."""

from __future__ import annotations

from collections.abc import Callable

from ..jobs import Chunk, JobContext, JobError, JobKind, Params, Summary, register
from ..topology import Topology, database_name
from . import documents, reverse_stream
from .config_source import ConfigSource
from .grant_fence import fenced, give_writes_back
from .mysql_hosts import MySQLHost
from .plans import Plan, Step
from .split import Connect, drop_databases, in_parallel, split_revision


def plan_cleanup(
    source: ConfigSource, *, split: int, author: str, connect: Connect = MySQLHost
) -> Plan:
    """The plan to remove what split ``split`` left behind (after which it cannot be
    reverted)."""
    after, _ = split_revision(source, split)
    words = after.reason.split()
    host, replica = words[1], words[3]
    current = Topology.from_json(source.current(documents.SHARDS).document)
    every = list(range(current.shard_count))

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
        {"split": split, "rerunnable": True},  # every drop can run again: resume finishes a killed run
    )  # fmt: skip


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
        params={"split": "the shard-map version the split published"},
        destructive=True,
    )
)
