"""After a split: drop the shard copies it (and its revert) renamed away, after which it cannot
be reverted. ``plan_cleanup`` does it on the split's two hosts; the ``cleanup`` long job
(``job start cleanup --param split=9``) does the same chunked by shard, on every MySQL host
of the map, for when there are many."""

from __future__ import annotations

from collections.abc import Callable

from ..jobs import Chunk, JobContext, JobError, JobKind, Params, Summary, register
from ..topology import database_name
from . import documents
from .config_source import ConfigSource
from .grant_fence import give_writes_back
from .mysql_hosts import MySQLHost
from .plans import Plan, Step
from .split import Connect, renamed_databases, split_revision


def plan_cleanup(
    source: ConfigSource, *, split: int, author: str, connect: Connect = MySQLHost
) -> Plan:
    """The plan to drop the copies split ``split`` left behind (after which it cannot be
    reverted)."""
    after, _ = split_revision(source, split)
    words = after.reason.split()
    hosts = (words[1], words[3])
    addresses = source.current(documents.SHARDS).document["hosts"]
    suffixes = (f"_split{split}", f"_reverted{split}")

    def drop(name: str) -> Callable[[], str]:
        def run() -> str:
            with connect(addresses[name]) as h:
                dropped = [db for suffix in suffixes for db in renamed_databases(h, suffix)]
                for db in dropped:
                    h.query(f"DROP DATABASE {db}")
                # The split's fence on the shards that left: they may come back one day.
                give_writes_back(h, sorted({db.split("_")[0] for db in dropped}))
            return f"{len(dropped)} databases dropped on {name}"

        return run

    return Plan(
        "cleanup",
        f"drop the shard copies split {split} left on {' and '.join(hosts)}",
        [Step(f"drop db*_split{split} on {name}", (name,), drop(name)) for name in hosts],
        {"split": split},
    )


def _cleanup_chunk(context: JobContext, chunk: Chunk, params: Params) -> Summary:
    """Drop the copies split ``params["split"]`` (and its revert) left of these shards, on
    every MySQL host of the map: a drop that already happened is skipped."""
    split = params.get("split")
    if type(split) is not int or split < 1:
        raise JobError("cleanup needs split=N, the shard-map version the split published")
    connect = context.mysql or MySQLHost
    dropped = 0
    for address in context.store.topology.hosts.values():
        if not address.startswith("mysql://"):
            continue
        with connect(address) as host:
            present = host.databases()
            for shard in chunk.shards:
                for suffix in (f"_split{split}", f"_reverted{split}"):
                    if f"{database_name(shard)}{suffix}" in present:
                        host.query(f"DROP DATABASE {database_name(shard)}{suffix}")
                        give_writes_back(host, [database_name(shard)])  # as plan_cleanup
                        dropped += 1
    return {"dropped": dropped}


register(
    JobKind(
        "cleanup",
        "Drop the shard copies a split (and its revert) renamed, after which it cannot be reverted",
        _cleanup_chunk,
        params={"split": "the shard-map version the split published"},
    )
)
