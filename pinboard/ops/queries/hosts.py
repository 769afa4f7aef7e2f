"""The overview's hosts: role, health and size of every MySQL host of the shard map in force.

Health comes from ``probes`` (all hosts probed at once, a second at most).
Users per host are estimated, not counted: ``COUNT(*)`` of the users table on
``USER_SAMPLE`` shards spread evenly over the host's shards, scaled up to all
of them. Placement is uniform over open shards, so the sample is fair for
hosts opened together; the page says it is an estimate.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from shardstore import ShardStoreError, Store, Topology
from shardstore.control.documents import masked
from shardstore.control.pairs import Pair, judge

from ...catalog import CATALOG
from .probes import Probe, probe

#: Shards per host whose users are counted for the estimate.
USER_SAMPLE = 8


@dataclass(frozen=True)
class HostRow:
    name: str
    address: str  # password masked
    masters: list[tuple[int, int]] = field(default_factory=list)  # ranges it serves
    replica_of: list[tuple[int, int]] = field(default_factory=list)  # ranges it backs up
    out_of_service: bool = False
    shards: int = 0
    probe: Probe | None = None
    users: int | None = None  # the estimate; None if not a master or not reachable

    @property
    def role(self) -> str:
        if self.out_of_service:
            return "out of service"
        roles = ["master"] * bool(self.masters) + ["replica"] * bool(self.replica_of)
        return " and ".join(roles) or "spare"


def host_rows(store: Store) -> list[HostRow]:
    """Every host of the map in force, probed, with its users estimated (masters only)."""
    topology = store.topology
    names = list(topology.hosts)
    with ThreadPoolExecutor(max_workers=min(8, len(names))) as pool:
        probes = list(pool.map(probe, topology.hosts.values()))
    return [host_row(store, name, found) for name, found in zip(names, probes, strict=True)]


def pairs(topology: Topology, rows: Sequence[HostRow]) -> list[Pair]:
    """Each MySQL master of the map with its replica, judged from the rows' probes."""
    looks = {row.name: row.probe.look() for row in rows if row.probe is not None}
    return judge(topology.as_json(), looks)


def host_row(store: Store, name: str, found: Probe | None = None) -> HostRow:
    """One host of the map in force (probed now unless ``found`` is its probe)."""
    topology = store.topology
    found = found or probe(topology.hosts[name])
    masters = [(r.first, r.last) for r in topology.ranges if r.master == name]
    shards = [s for first, last in masters for s in range(first, last + 1)]
    return HostRow(
        name=name,
        address=masked(topology.hosts[name]),
        masters=masters,
        replica_of=[(r.first, r.last) for r in topology.ranges if name in r.replicas],
        out_of_service=name in topology.out_of_service,
        shards=len(shards),
        probe=found,
        users=estimate_users(store, shards) if shards and found.reachable else None,
    )


def sample(shards: Sequence[int], size: int = USER_SAMPLE) -> list[int]:
    """``size`` shards spread evenly over ``shards`` (all of them if there are fewer)."""
    if len(shards) <= size:
        return list(shards)
    return [shards[i * len(shards) // size] for i in range(size)]


def estimate_users(store: Store, shards: Sequence[int]) -> int | None:
    """Users on these shards: the mean count of a sample, times the number of shards."""
    table = CATALOG.type("user").table
    counted = []
    for shard in sample(shards):
        try:
            with store.session(shard) as session:
                counted.append(int(session.query(f"SELECT COUNT(*) FROM {{db}}.{table}")[0][0]))
        except ShardStoreError:
            return None  # a shard the host cannot serve: no estimate rather than a wrong one
    return round(sum(counted) / len(counted) * len(shards))
