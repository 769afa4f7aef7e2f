"""Open a new shard range on new hosts (the seeds' "open up new shards").

The shard space grows at its end: with shards 0..4095 in the map, a new pair
of hosts takes 4096..N. The plan creates the new shards' databases and tables
on the new master (its replica gets them by replication), then publishes the
map with the new range and, unless told to keep the old ones open, sends new
users there. Existing users never move: their IDs name their shards.

Steps, in order (the publish last, so a failure before it changes nothing
that any process reads):

1. on MySQL: check the new hosts (reachable, holding none of the new shards,
   the replicas following no one else); start each replica following the master
   (GTID); open the master for writes (every shard host starts ``read_only``,
   the fence), waiting for a replica's acknowledgement if it has any;
2. create databases dbNNNNN..dbMMMMM and their tables on the new master;
3. on MySQL: wait until each replica has them too;
4. publish the shard map: the new range, and where new users land.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..exceptions import InvalidTopology
from ..ids import MAX_SHARD_ID
from ..interface import StoreInterface
from ..replicas import with_replicas
from ..schema import init_shards
from ..topology import Topology, database_name
from . import documents
from .config_source import ConfigSource
from .mysql_hosts import MySQLHost
from .new_pairs import NewPair
from .plans import Plan, Step
from .publish import publish_step

Connect = Callable[[Topology], StoreInterface]


def plan_open_range(
    source: ConfigSource,
    connect: Connect,
    *,
    count: int,
    master: str,
    master_address: str,
    replicas: Mapping[str, str] | None = None,
    keep_open: bool = False,
    author: str,
    mysql: Callable[[str], MySQLHost] = MySQLHost,
) -> Plan:
    """The plan to add ``count`` shards at the end of the map on a new master (and replica).

    ``connect(topology)`` opens a store on a topology (to create the new shards);
    ``mysql(address)`` an operator's connection to a MySQL host.
    """
    current = source.current(documents.SHARDS)
    document = current.document
    first = int(document["shard_count"])
    last = first + count - 1
    if count < 1 or last > MAX_SHARD_ID:
        raise InvalidTopology(f"a new range needs 1..{MAX_SHARD_ID - first + 1} shards")
    hosts = dict(document["hosts"])
    replicas = dict(replicas or {})
    for name in (master, *replicas):
        if name in hosts:
            raise InvalidTopology(f"host {name} is in the map already: a new range needs new hosts")
    if master in replicas:
        raise InvalidTopology(f"{master} cannot be its own replica")
    for name, address in replicas.items():
        if not address:
            raise InvalidTopology(f"replica {name} needs an address")
    hosts.update({master: master_address, **replicas})
    entry = with_replicas({"range": [first, last], "master": master}, replicas)
    new_open = [*document["open"], [first, last]] if keep_open else [[first, last]]
    new = {
        **document,
        "shard_count": last + 1,
        "hosts": hosts,
        "ranges": [*document["ranges"], entry],
        "open": new_open,
        "lookup_shards": document.get("lookup_shards", first),  # buckets never move
    }
    topology = Topology.from_json(documents.validate(documents.SHARDS, new))

    def create() -> str:
        store = connect(topology)
        try:
            done = init_shards(store, hosts=[master])
        finally:
            store.close()
        return f"{done} shards ready on {master}"

    where = f"{master}" + (f" (replicas {', '.join(replicas)})" if replicas else "")
    landing = "as well as the open ranges" if keep_open else "only"
    databases = f"db{first:05d}..db{last:05d}"
    mapped = f"range [{first}, {last}] on {where}, open {new_open}"
    create_step = Step(f"create databases {databases} and their tables", (master,), create)
    if master_address.startswith("mysql://"):
        names = frozenset(database_name(shard) for shard in range(first, last + 1))
        pair = NewPair(mysql, master, master_address, replicas, names)
        steps = [*pair.prepare(), create_step, *pair.catch_up()]
    else:
        steps = [create_step]
    publish = publish_step(
        source,
        current,
        new,
        author=author,
        reason=f"open shards {first}..{last} on {master}",
        change=mapped,
        hosts=(master,),
    )
    return Plan(
        "open-range",
        f"open shards {first}..{last} on {where}; new users land there {landing}",
        [*steps, publish],
        {"first": first, "last": last, "master": master, "replicas": sorted(replicas)},
    )
