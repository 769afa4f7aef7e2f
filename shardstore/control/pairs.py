"""Is every master backed up? The pair health check (``shardstore pairs``, the console's
overview, ``make cluster-status``).

A master is healthy when the shard map names one replica for its ranges, in service,
which replicates from it (both threads running, no error) at most ``MAX_LAG`` seconds
behind, and its commits wait for that replica's acknowledgement (semi-sync kept: on, no
fallback, a replica connected). Anything less is a pair that a failure of its master
would cost writes or shards, so it is reported with its reason, never averaged away.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from .mysql_hosts import HostError, MySQLHost, ReplicaStatus, SemiSync, endpoint

#: Replication lag (seconds) over which a replica no longer counts as a backup.
MAX_LAG = 30


@dataclass(frozen=True)
class Look:
    """What one MySQL host says of itself (``error`` if it cannot be asked)."""

    error: str = ""
    replication: ReplicaStatus | None = None  # None: it replicates from no one
    semi_sync: SemiSync | None = None


@dataclass(frozen=True)
class Pair:
    """A master, the replica the map names for it (if any), and what is wrong."""

    master: str
    replica: str | None
    problems: tuple[str, ...]

    @property
    def healthy(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        return {
            "master": self.master,
            "replica": self.replica,
            "healthy": self.healthy,
            "problems": list(self.problems),
        }

    def text(self) -> str:
        pair = f"{self.master} -> {self.replica or '(no replica)'}"
        return f"{pair}: " + ("healthy" if self.healthy else "; ".join(self.problems))


def look(connect: Callable[[str], MySQLHost], address: str) -> Look:
    """One host's replication and semi-sync, or why they cannot be read."""
    try:
        with connect(address) as host:
            return Look(replication=host.replica_status(), semi_sync=host.semi_sync())
    except HostError as exc:
        return Look(error=str(exc))


def judge(
    document: Mapping[str, Any], looks: Mapping[str, Look], *, max_lag: int = MAX_LAG
) -> list[Pair]:
    """Every master of the map with its problems, from what each host said (``looks``)."""
    addresses = document["hosts"]
    out = set(document.get("out_of_service", []))
    replicas: dict[str, set[str | None]] = {}
    for entry in document["ranges"]:
        replicas.setdefault(entry["master"], set()).add(entry.get("replica"))
    pairs = []
    for master, named in sorted(replicas.items()):
        if not str(addresses[master]).startswith("mysql://"):
            continue  # the embedded default's directories: no replication
        replica = next(iter(named)) if len(named) == 1 else None
        problems = []
        if len(named) > 1:
            problems.append(f"its ranges name several replicas: {sorted(map(str, named))}")
        elif replica is None:
            problems.append("no replica in the shard map")
        problems += _master_problems(looks.get(master, Look(error="not looked at")))
        if replica is not None:
            if replica in out:
                problems.append(f"{replica} is out of service")
            source = "{}:{}".format(*endpoint(addresses[master]))
            problems += _replica_problems(replica, looks.get(replica), source, max_lag)
        pairs.append(Pair(master, replica, tuple(problems)))
    return pairs


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


def _master_problems(master: Look) -> list[str]:
    if master.error:
        return [f"master cannot be asked: {master.error}"]
    semi = master.semi_sync
    if semi is None or not semi.enabled:
        return ["semi-sync is off: commits do not wait for a replica"]
    if semi.falls_back:
        return ["semi-sync falls back to asynchronous when no replica is connected"]
    if semi.replicas == 0:
        return ["no replica acknowledges its commits"]
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
