"""Undo a split (``plan_split_revert``, until ``cleanup`` has run): a cut-back of seconds,
whatever the shards hold, since the host they left has kept them (the split's reverse
stream, ``reverse_stream``). Steps:

1. check the reverse stream runs, healthy (a plan refuses at once when it does not);
2. publish the moved shards read-only, 3. wait until every process follows it;
4. fence them on the replica in MySQL itself (``grant_fence``);
5. wait until the host has applied the replica's last write (GTID, the replica's domain);
6. stop and remove the reverse stream; 7. give the site's writes on them back on the host;
8. publish the old ranges (this commits the revert; the read-only window is 2 to 8);
9. take the site's reads on the replica's copies away too (``grant_fence.take_reads``):
   nothing feeds them now, so a process on a stale map (cut off from ZooKeeper) gets an
   error there, never a frozen value to serve or cache;
10. rename the replica's copies away (``db00042_reverted9``).

The replica has taken its own writes since the split, so it cannot simply follow the host
again: it is left out of service until it is rebuilt as a replica (``rebuild``), and so
are its own replicas. The moved shards come back with the host's replicas, which hold
them: the reverse stream's writes are in the host's binary log.

With the replica lost (down, the reverse stream cut from it) the revert refuses, and names
``split --revert SPLIT --emergency`` (split_emergency.py), which cuts back without it once
it is down from every vantage point.
"""

from __future__ import annotations

from typing import Any

from ..exceptions import InvalidTopology
from ..replicas import replicas_of, with_replicas
from ..topology import database_name
from . import documents, reverse_stream
from .config_source import ConfigSource, Revision
from .grant_fence import fence_step, read_fence_step
from .mysql_hosts import NO_ANSWER, HostError, MySQLHost
from .plans import Plan, Step
from .publish import FOLLOW_SECONDS, followed_step, publish_step
from .split import Connect, rename_shards, shards_in, spans, split_revision

#: How long the host is given to apply the replica's last writes, the shards read-only.
CATCH_UP_SECONDS = 10.0


def plan_split_revert(
    source: ConfigSource,
    *,
    split: int,
    author: str,
    connect: Connect = MySQLHost,
    follow_seconds: float = FOLLOW_SECONDS,
    catch_up_seconds: float = CATCH_UP_SECONDS,
    base: Revision | None = None,
) -> Plan:
    """The plan to give the shards of split ``split`` back to the host they left (``base``:
    the map a dead run began with, when it is planned again)."""
    after, _ = split_revision(source, split)
    current = base or source.current(documents.SHARDS)
    document = current.document
    words = after.reason.split()  # "split HOST onto REPLICA"
    host, replica = words[1], words[3]
    moved = [r["range"] for r in after.document["ranges"] if r["master"] == replica]
    for first, last in moved:
        for shard in (first, last):
            if _master_of(document, shard) != replica:
                raise InvalidTopology(f"shard {shard} is no longer on {replica}: cannot revert")
    addresses = document["hosts"]
    shards = shards_in(moved)

    def check() -> str:
        with connect(addresses[host]) as m, connect(addresses[replica]) as r:
            return reverse_stream.check(m, r, split, shards)

    if base is None:  # a new revert refuses at once; one planned again must undo or resume
        try:
            check()
        except HostError as exc:
            lost = exc.errno in NO_ANSWER  # the new master (or the host) gives no answer
            hint = f"; if {replica} is lost, `split --revert {split} --emergency` cuts back without it"  # fmt: skip
            raise InvalidTopology(f"split {split} cannot be reverted: {exc}{hint if lost else ''}") from None  # fmt: skip
    frozen = documents.validate(documents.SHARDS, {**document, "read_only": moved})
    # The host's replicas have the moved shards too (the reverse stream's writes are in its
    # binary log); the replica's own, which follow a host out of service, go out with it.
    kept = sorted({n for r in document["ranges"] if r["master"] == host for n in replicas_of(r)})
    orphans = {n for r in document["ranges"] if r["master"] == replica for n in replicas_of(r)}
    ranges = [
        (
            with_replicas({**r, "master": host}, kept)
            if r["master"] == replica and r["range"] in moved
            else r
        )
        for r in document["ranges"]
    ]
    merged = merge_ranges(ranges)
    orphans -= {n for r in merged for n in replicas_of(r)}
    out = sorted({*document.get("out_of_service", []), replica, *orphans})
    restored = {k: v for k, v in document.items() if k != "read_only"}
    restored = documents.validate(
        documents.SHARDS, {**restored, "ranges": merged, "out_of_service": out}
    )
    frozen_revision = Revision(documents.SHARDS, current.version + 1, frozen, author, "", "")
    reason = f"revert split {split}: shards {spans(moved)} back to {host}"
    name = reverse_stream.connection(split)

    def catch_up() -> str:
        with connect(addresses[host]) as m, connect(addresses[replica]) as r:
            position = reverse_stream.caught_up(m, r, catch_up_seconds)
        return f"{host} has applied {position or 'everything'} from {replica}"

    def stop() -> str:
        with connect(addresses[host]) as m:
            gone = reverse_stream.stop(m, split)
        return f"{name} {'stopped and removed' if gone else 'was gone already'} on {host}"

    def restart() -> str:
        with connect(addresses[host]) as m, connect(addresses[replica]) as r:
            return reverse_stream.start(m, r, split, shards)

    moved_databases = [database_name(shard) for shard in shards]

    def set_aside() -> str:
        n = rename_shards(connect, addresses[replica], shards, f"_reverted{split}")
        return f"{n} shards renamed *_reverted{split} on {replica}; {replica} out of service"

    return Plan(
        "split-revert",
        reason,
        [
            Step(f"check {name} on {host} follows {replica}, healthy", (host, replica), check),
            publish_step(
                source,
                current,
                frozen,
                author=author,
                reason=f"{reason}: read-only window",
                change=f"shards {spans(moved)} read-only",
                hosts=(host, replica),
            ),
            followed_step(
                source,
                documents.SHARDS,
                current.version + 1,
                hosts=(host, replica),
                timeout=follow_seconds,
            ),
            fence_step(connect, replica, addresses[replica], moved_databases, spans(moved)),
            Step(
                f"wait until {host} has applied all of {replica}'s writes ({name}, GTID)",
                (host, replica),
                catch_up,
            ),
            Step(f"stop and remove {name} on {host}", (host,), stop, restart),
            fence_step(
                connect, host, addresses[host], moved_databases, spans(moved), give_back=True
            ),
            publish_step(
                source,
                frozen_revision,
                restored,
                author=author,
                reason=reason,
                change=f"shards {spans(moved)} mastered by {host}; {replica} out of service",
                hosts=(host, replica),
                commits=True,
            ),
            read_fence_step(connect, replica, addresses[replica], moved_databases, spans(moved)),
            Step(f"rename {replica}'s copies of shards {spans(moved)} away", (replica,), set_aside),
        ],
        {"split": split, "host": host, "replica": replica, "base": current.version},
    )


def _master_of(document: dict[str, Any], shard: int) -> str | None:
    for entry in document["ranges"]:
        if entry["range"][0] <= shard <= entry["range"][1]:
            return str(entry["master"])
    return None


def merge_ranges(ranges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adjacent ranges with the same master and replicas as one range."""
    merged: list[dict[str, Any]] = []
    for entry in sorted(ranges, key=lambda r: r["range"][0]):
        last = merged[-1] if merged else None
        if (
            last is not None
            and last["master"] == entry["master"]
            and replicas_of(last) == replicas_of(entry)
            and last["range"][1] + 1 == entry["range"][0]
        ):
            last["range"] = [last["range"][0], entry["range"][1]]
        else:
            merged.append({**entry, "range": list(entry["range"])})
    return merged
