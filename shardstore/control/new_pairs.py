"""Starting new MySQL masters and their replicas (a "pair", whatever its replicas' number).

Every shard host starts ``read_only`` and replicating from no one (as provisioned: the
fence that keeps a crashed master that comes back from taking writes). A new pair is
started by making its replicas follow its master by GTID, then opening the master for
writes, waiting for a replica's acknowledgement (semi-synchronous). ``open-range``
does this for the pair of a new range; ``bring-up`` for every pair of a new deployment's
first shard map.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..durability import STRICT, Durability, of_master
from ..replicas import replicas_of
from ..topology import database_name
from . import documents
from .config_source import ConfigSource
from .mysql_hosts import HostError, MySQLHost, endpoint
from .plans import Plan, Step

#: How long a new replica may take to replay what its master was given.
REPLICA_CATCH_UP_SECONDS = 600.0


class NewPair:
    """The steps that start a new master and its replicas: new hosts start read-only and
    replicate from no one. ``replicas``: name -> address; ``databases``: shard databases
    none of them may hold yet."""

    def __init__(
        self,
        mysql: Callable[[str], MySQLHost],
        master: str,
        master_address: str,
        replicas: Mapping[str, str],
        databases: frozenset[str] = frozenset(),
        durability: Durability = STRICT,
    ) -> None:
        self.mysql = mysql
        self.master, self.master_address = master, master_address
        self.replicas = dict(replicas)
        self.databases = databases
        self.durability = durability

    def prepare(self) -> list[Step]:
        hosts = (self.master, *self.replicas)
        holding = ", none of the new shards" if self.databases else ""
        steps = [Step(f"check {' and '.join(hosts)}: reachable{holding}", hosts, self.check)]
        for name in self.replicas:
            step = f"{name} replicates from {self.master} (GTID)"
            steps.append(Step(step, (self.master, name), self.replicate(name)))
        steps.append(Step(f"open {self.master} for writes", (self.master,), self.open))
        return steps

    def catch_up(self) -> list[Step]:
        return [
            Step(f"wait until {name} has the new shards", (name,), self.wait(name))
            for name in self.replicas
        ]

    def check(self) -> str:
        for name, address in [(self.master, self.master_address), *self.replicas.items()]:
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

    def replicate(self, name: str) -> Callable[[], str]:
        def run() -> str:
            with self.mysql(self.replicas[name]) as r, self.mysql(self.master_address) as m:
                status = r.replica_status()
                if status is None or not status.healthy:
                    r.replicate_from(m)
            return f"{name} follows {self.master}"

        return run

    def open(self) -> str:
        with self.mysql(self.master_address) as m:
            if not self.replicas:
                m.arm_semi_sync(self.durability)  # waits for the replica rebuilt later
            else:
                m.set_semi_sync(True, self.durability)
            m.set_read_only(False)
        wait = ", commits wait for a replica's acknowledgement" if self.replicas else ""
        return f"{self.master} writable{wait}"

    def wait(self, name: str) -> Callable[[], str]:
        def run() -> str:
            with self.mysql(self.master_address) as m, self.mysql(self.replicas[name]) as r:
                position = m.gtid_binlog_pos()
                if not r.wait_for(position, REPLICA_CATCH_UP_SECONDS):
                    raise HostError(f"{name} did not reach {position} in {REPLICA_CATCH_UP_SECONDS:g}s")  # fmt: skip
            return f"{name} at {position}"

        return run

    def _source(self) -> str:
        return "{}:{}".format(*endpoint(self.master_address))


def plan_bring_up(source: ConfigSource, *, connect: Callable[[str], MySQLHost]) -> Plan:
    """Start every pair of the map in force whose master is still read-only and holds no
    shard yet (a new deployment's, after its first map is published); ``shardstore init``
    then creates the shards on the masters, and their replicas get them by replication."""
    document = source.current(documents.SHARDS).document
    addresses = document["hosts"]
    shards = frozenset(database_name(shard) for shard in range(int(document["shard_count"])))
    pairs: dict[str, list[str]] = {}
    for entry in document["ranges"]:
        pairs.setdefault(entry["master"], replicas_of(entry))
    steps: list[Step] = []
    started = []
    for master, replicas in pairs.items():
        with connect(addresses[master]) as m:
            if not m.read_only() or m.databases() & shards:
                continue  # running already
        durability = of_master(document, master)
        named = {name: addresses[name] for name in replicas}
        pair = NewPair(connect, master, addresses[master], named, durability=durability)
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
