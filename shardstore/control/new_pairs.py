"""Starting new MySQL master/replica pairs.

Every shard host starts ``read_only`` and replicating from no one (as provisioned: the
fence that keeps a crashed master that comes back from taking writes). A new pair is
started by making its replica follow its master by GTID, then opening the master for
writes, waiting for its replica's acknowledgements (semi-synchronous). ``open-range``
does this for the pair of a new range; ``bring-up`` for every pair of a new deployment's
first shard map.
"""

from __future__ import annotations

from collections.abc import Callable

from ..durability import STRICT, Durability, of_master
from ..topology import database_name
from . import documents
from .config_source import ConfigSource
from .mysql_hosts import HostError, MySQLHost, endpoint
from .plans import Plan, Step

#: How long a new replica may take to replay what its master was given.
REPLICA_CATCH_UP_SECONDS = 600.0


class NewPair:
    """The steps that start a new master/replica pair: new hosts start read-only and
    replicate from no one. ``databases``: shard databases neither may hold yet."""

    def __init__(
        self,
        mysql: Callable[[str], MySQLHost],
        master: str,
        master_address: str,
        replica: str | None,
        replica_address: str | None,
        databases: frozenset[str] = frozenset(),
        durability: Durability = STRICT,
    ) -> None:
        self.mysql = mysql
        self.master, self.master_address = master, master_address
        self.replica, self.replica_address = replica, replica_address
        self.databases = databases
        self.durability = durability

    def prepare(self) -> list[Step]:
        hosts = tuple(filter(None, (self.master, self.replica)))
        holding = ", none of the new shards" if self.databases else ""
        steps = [Step(f"check {' and '.join(hosts)}: reachable{holding}", hosts, self.check)]
        if self.replica is not None:
            steps.append(Step(f"{self.replica} replicates from {self.master} (GTID)", hosts, self.replicate))  # fmt: skip
        steps.append(Step(f"open {self.master} for writes", (self.master,), self.open))
        return steps

    def catch_up(self) -> list[Step]:
        if self.replica is None:
            return []
        return [Step(f"wait until {self.replica} has the new shards", (self.replica,), self.wait)]

    def check(self) -> str:
        for name, address in self._hosts():
            with self.mysql(address) as host:
                held = sorted(self.databases & host.databases())
                if held:
                    raise HostError(f"{name} holds {len(held)} of the new shards already ({held[0]}, ...)")  # fmt: skip
                status = host.replica_status()
            if status is None:
                continue
            if name == self.master:
                raise HostError(f"{name} replicates from {status.source}: not a new master")
            if status.source != self._source():
                raise HostError(f"{name} replicates from {status.source}, not from {self.master}")
        return "ready"

    def replicate(self) -> str:
        assert self.replica_address is not None
        with self.mysql(self.replica_address) as r, self.mysql(self.master_address) as m:
            status = r.replica_status()
            if status is None or not status.healthy:
                r.replicate_from(m)
        return f"{self.replica} follows {self.master}"

    def open(self) -> str:
        with self.mysql(self.master_address) as m:
            if self.replica is None:
                m.arm_semi_sync(self.durability)  # waits for the replica rebuilt later
            else:
                m.set_semi_sync(True, self.durability)
            m.set_read_only(False)
        wait = ", commits wait for its replica" if self.replica else ""
        return f"{self.master} writable{wait}"

    def wait(self) -> str:
        assert self.replica_address is not None
        with self.mysql(self.master_address) as m, self.mysql(self.replica_address) as r:
            position = m.gtid_binlog_pos()
            if not r.wait_for(position, REPLICA_CATCH_UP_SECONDS):
                raise HostError(f"{self.replica} did not reach {position} in {REPLICA_CATCH_UP_SECONDS:g}s")  # fmt: skip
        return f"{self.replica} at {position}"

    def _hosts(self) -> list[tuple[str, str]]:
        hosts = [(self.master, self.master_address)]
        if self.replica is not None and self.replica_address is not None:
            hosts.append((self.replica, self.replica_address))
        return hosts

    def _source(self) -> str:
        return "{}:{}".format(*endpoint(self.master_address))


def plan_bring_up(source: ConfigSource, *, connect: Callable[[str], MySQLHost]) -> Plan:
    """Start every pair of the map in force whose master is still read-only and holds no
    shard yet (a new deployment's, after its first map is published); ``shardstore init``
    then creates the shards on the masters, and their replicas get them by replication."""
    document = source.current(documents.SHARDS).document
    addresses = document["hosts"]
    shards = frozenset(database_name(shard) for shard in range(int(document["shard_count"])))
    pairs: dict[str, str | None] = {}
    for entry in document["ranges"]:
        pairs.setdefault(entry["master"], entry.get("replica"))
    steps: list[Step] = []
    started = []
    for master, replica in pairs.items():
        with connect(addresses[master]) as m:
            if not m.read_only() or m.databases() & shards:
                continue  # running already
        durability = of_master(document, master)
        pair = NewPair(connect, master, addresses[master], replica, replica and addresses[replica], durability=durability)  # fmt: skip
        steps += pair.prepare()
        started.append(master)
    if not steps:
        raise HostError("every master of the map is open already: nothing to bring up")
    return Plan(
        "bring-up",
        f"start the pairs of {', '.join(started)}: replicas follow, masters open for writes",
        steps,
        {"masters": started},
    )
