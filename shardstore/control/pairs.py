"""Is every master backed up? The pair health check (``shardstore pairs``, the console's
overview, ``make cluster-status``). A "pair" is a master and its replicas, however many.

A master is healthy when its ranges name the same replicas, one at least, each in
service and replicating from it (both threads running, no error) at most ``MAX_LAG``
seconds behind, and its commits wait for a replica's acknowledgement (semi-sync kept: on,
no fallback, a replica connected), from no more servers than the map names: any that
acknowledges can release a commit. Anything less is a pair that a failure of its master
(or of one more host) would cost writes or shards, so it is reported with its reason,
never averaged away. A healthy pair with fewer replicas than ``replicas.WANTED`` is also
reported ``under_replicated``: one more death and its range takes no write.

Every other replication stream is reported too: the named connections of MariaDB's
multi-source replication (``SHOW ALL SLAVES STATUS``), a split's reverse stream above all
(``reverse_stream``), which is what a revert cuts back over and, until the new master has
a replica, the only server that acknowledges its commits. A stream is listed with the pair
of the master it replicates from (or, if that is no master of the map, of the host it runs
on), healthy when both its threads run with no error, at most ``MAX_LAG`` seconds behind,
from a master of the map, and (a reverse stream) still filtered to its shards. A pair's
``healthy`` is about its replica; ``shardstore pairs`` exits 1 if a pair or a stream is not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from ..durability import STRICT, Durability, of_master
from ..replicas import WANTED, replicas_of
from . import reverse_stream
from .mysql_hosts import HostError, MySQLHost, ReplicaStatus, SemiSync, endpoint

#: Replication lag (seconds) over which a replica no longer counts as a backup.
MAX_LAG = 30


@dataclass(frozen=True)
class Stream:
    """A named replication connection on ``host`` (a split's reverse stream, or another
    multi-source one), with what is wrong with it (``judge`` says)."""

    host: str
    name: str
    status: ReplicaStatus
    filter: str = ""  # its replicate_wild_do_table
    source_name: str = ""  # the host of the map it replicates from ("": none)
    problems: tuple[str, ...] = ()

    @property
    def healthy(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        status = self.status
        return {
            "name": self.name,
            "host": self.host,
            "source": self.source_name or status.source,
            "running": status.io_running and status.sql_running,
            "lag_seconds": status.lag_seconds,
            "error": status.last_error,
            "healthy": self.healthy,
            "problems": list(self.problems),
        }

    def text(self) -> str:
        where = f"{self.name} on {self.host} from {self.source_name or self.status.source}"
        state = f"healthy, {self.status.lag_seconds}s behind"
        return f"{where}: " + (state if self.healthy else "; ".join(self.problems))


@dataclass(frozen=True)
class Look:
    """What one MySQL host says of itself (``error`` if it cannot be asked)."""

    error: str = ""
    replication: ReplicaStatus | None = None  # None: it replicates from no one
    semi_sync: SemiSync | None = None
    streams: tuple[Stream, ...] = ()  # its named connections, as read (not judged)


@dataclass(frozen=True)
class Replica:
    """A replica the map names for a master, and what is wrong with it."""

    name: str
    problems: tuple[str, ...] = ()
    lag_seconds: int | None = None

    @property
    def healthy(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "healthy": self.healthy, "lag_seconds": self.lag_seconds, "problems": list(self.problems)}  # fmt: skip

    def text(self) -> str:
        return f"{self.name} " + (f"healthy, {self.lag_seconds}s behind" if self.healthy else "; ".join(self.problems))  # fmt: skip


@dataclass(frozen=True)
class Pair:
    """A master, the replicas the map names for it, and what is wrong (its own problems
    and its replicas')."""

    master: str
    replicas: tuple[Replica, ...]
    problems: tuple[str, ...]
    streams: tuple[Stream, ...] = ()  # named streams from this master (or on it)
    durability: Durability = STRICT  # its ranges' policy, in the map

    @property
    def healthy(self) -> bool:
        return not self.problems

    @property
    def under_replicated(self) -> bool:
        """Fewer healthy replicas than a range should have (``replicas.WANTED``)."""
        return sum(replica.healthy for replica in self.replicas) < WANTED

    @property
    def streams_healthy(self) -> bool:
        return all(stream.healthy for stream in self.streams)

    def as_json(self) -> dict[str, Any]:
        return {
            "master": self.master,
            "replicas": [replica.as_json() for replica in self.replicas],
            "durability": str(self.durability),
            "healthy": self.healthy,
            "under_replicated": self.under_replicated,
            "problems": list(self.problems),
            "streams": [stream.as_json() for stream in self.streams],
        }

    def text(self) -> str:
        names = ", ".join(replica.name for replica in self.replicas) or "(no replica)"
        state = "healthy" if self.healthy else "; ".join(self.problems)
        short = f" (under-replicated: {WANTED} wanted)" if self.healthy and self.under_replicated else ""  # fmt: skip
        lines = [f"{self.master} -> {names} ({self.durability}): {state}{short}"]
        lines += [f"  replica {replica.text()}" for replica in self.replicas]
        return "\n".join([*lines, *(f"  stream {s.text()}" for s in self.streams)])


def look(connect: Callable[[str], MySQLHost], address: str) -> Look:
    """One host's replication and semi-sync, or why they cannot be read."""
    try:
        with connect(address) as host:
            rows = host.query("SHOW ALL SLAVES STATUS")
            return Look(
                replication=host.replica_status(),
                semi_sync=host.semi_sync(),
                streams=named_streams(rows),
            )
    except HostError as exc:
        return Look(error=str(exc))


def judge(
    document: Mapping[str, Any], looks: Mapping[str, Look], *, max_lag: int = MAX_LAG
) -> list[Pair]:
    """Every master of the map with its problems, from what each host said (``looks``)."""
    addresses = document["hosts"]
    out = set(document.get("out_of_service", []))
    named: dict[str, set[tuple[str, ...]]] = {}
    for entry in document["ranges"]:
        named.setdefault(entry["master"], set()).add(tuple(replicas_of(entry)))
    pairs = []
    for master, lists in sorted(named.items()):
        if not str(addresses[master]).startswith("mysql://"):
            continue  # the embedded default's directories: no replication
        names = sorted({name for names in lists for name in names})
        problems = []
        if len(lists) > 1:
            problems.append(f"its ranges name different replicas: {sorted(lists)}")
        if not names:
            problems.append("no replica in the shard map")
        durability = of_master(document, master)
        seen = looks.get(master, Look(error="not looked at"))
        problems += _master_problems(seen, durability, len(names))
        source = "{}:{}".format(*endpoint(addresses[master]))
        replicas = []
        for name in names:
            found = looks.get(name)
            wrong = [f"{name} is out of service"] if name in out else []
            wrong += _replica_problems(name, found, source, max_lag)
            status = found.replication if found else None
            replicas.append(Replica(name, tuple(wrong), status.lag_seconds if status else None))
            problems += wrong
        pairs.append(Pair(master, tuple(replicas), tuple(problems), durability=durability))
    return _with_streams(pairs, addresses, looks, max_lag)


def named_streams(rows: list[dict[str, Any]], host: str = "") -> tuple[Stream, ...]:
    """The named connections among ``SHOW ALL SLAVES STATUS``'s rows, as read."""
    return tuple(
        Stream(
            host,
            str(row["Connection_name"]),
            reverse_stream.stream(row),
            str(row.get("Replicate_Wild_Do_Table") or ""),
        )
        for row in rows
        if row.get("Connection_name")
    )


def judge_stream(stream: Stream, source_name: str, max_lag: int = MAX_LAG) -> Stream:
    """``stream`` with its problems, ``source_name`` being the map's name of its source."""
    status, problems = stream.status, []
    if not source_name:
        problems.append(f"its source {status.source} is no host of the map")
    if not status.io_running:
        problems.append(f"I/O thread {status.io_state}")
    if not status.sql_running:
        problems.append("SQL thread stopped")
    if status.last_error:
        problems.append(f"error: {status.last_error}")
    if status.healthy and status.lag_seconds is None:
        problems.append("its lag is not known yet")
    elif status.healthy and status.lag_seconds is not None and status.lag_seconds > max_lag:
        problems.append(f"{status.lag_seconds}s behind (at most {max_lag}s)")
    if reverse_stream.is_reverse(stream.name) and not stream.filter:
        problems.append("its table filter is lost (a restart?): a revert refuses it")
    return replace(stream, source_name=source_name, problems=tuple(problems))


def _with_streams(
    pairs: list[Pair], addresses: Mapping[str, str], looks: Mapping[str, Look], max_lag: int
) -> list[Pair]:
    """Each pair with the named streams from its master (or, from no master, on it)."""
    names = {"{}:{}".format(*endpoint(a)): n for n, a in addresses.items() if str(a).startswith("mysql://")}  # fmt: skip
    masters = {pair.master for pair in pairs}
    found: dict[str, list[Stream]] = {}
    for host, seen in sorted(looks.items()):
        for stream in seen.streams:
            source = names.get(stream.status.source, "")
            judged = judge_stream(replace(stream, host=host), source, max_lag)
            owner = source if source in masters else host
            found.setdefault(owner, []).append(judged)
    return [replace(pair, streams=tuple(found.get(pair.master, ()))) for pair in pairs]


def pair_health(
    document: Mapping[str, Any],
    connect: Callable[[str], MySQLHost],
    *,
    max_lag: int = MAX_LAG,
) -> list[Pair]:
    """Every MySQL pair of the map, each host asked once, all at the same time."""
    names = [n for n, a in document["hosts"].items() if str(a).startswith("mysql://")]
    if not names:
        return []
    with ThreadPoolExecutor(max_workers=min(16, len(names))) as pool:
        found = pool.map(lambda n: look(connect, document["hosts"][n]), names)
        looks = dict(zip(names, found, strict=True))
    return judge(document, looks, max_lag=max_lag)


def _master_problems(master: Look, durability: Durability, named: int) -> list[str]:
    if master.error:
        return [f"master cannot be asked: {master.error}"]
    semi = master.semi_sync
    if semi is None or not semi.enabled:
        return ["semi-sync is off: commits do not wait for a replica"]
    if semi.timeout_ms != durability.timeout_ms:
        return [
            f"its commits wait {semi.timeout_ms} ms for an acknowledgement, not as its"
            f" durability ({durability}) says: `shardstore durability` sets it again"
        ]
    if semi.degraded:
        return [f"degraded ({durability}): no replica acknowledged in time, commits are asynchronous"]  # fmt: skip
    if semi.falls_back:
        return ["semi-sync falls back to asynchronous when no replica is connected"]
    if semi.replicas == 0:
        return ["no replica acknowledges its commits"]
    if semi.replicas > named > 0:  # with none named, "no replica in the shard map" says it
        return [
            f"{semi.replicas} servers acknowledge its commits, more than the replicas the map"
            f" names ({named}): one that is not a replica may release a commit alone"
        ]
    return []


def _replica_problems(name: str, replica: Look | None, source: str, max_lag: int) -> list[str]:
    if replica is None or replica.error:
        return [f"{name} cannot be asked: {replica.error if replica else 'not looked at'}"]
    status = replica.replication
    if status is None:
        return [f"{name} replicates from no one"]
    if status.source != source:
        return [f"{name} replicates from {status.source}, not from its master"]
    if not status.healthy:
        return [f"{name}'s replication is broken: {status.last_error or 'stopped'}"]
    if status.lag_seconds is None or status.lag_seconds > max_lag:
        return [f"{name} is {status.lag_seconds}s behind (at most {max_lag}s)"]
    return []
