"""Take a MySQL host out of service, or put it back.

A host out of service stays in the map (the console lists it) but is no
longer anyone's replica, so no failover promotes it; a master cannot be taken
out (fail it over first). Putting it back only clears the mark: make it a
replica again with a failover or split, which set up its replication.
"""

from __future__ import annotations

from ..exceptions import InvalidTopology
from ..replicas import replicas_of, with_replicas
from . import documents
from .config_source import ConfigSource
from .plans import Plan
from .publish import publish_step


def plan_host_service(source: ConfigSource, *, host: str, in_service: bool, author: str) -> Plan:
    current = source.current(documents.SHARDS)
    document = current.document
    if host not in document["hosts"]:
        raise InvalidTopology(f"no host {host} in the shard map")
    marked = set(document.get("out_of_service", []))
    if in_service == (host not in marked):
        state = "in service" if in_service else "out of service"
        raise InvalidTopology(f"host {host} is {state} already")
    ranges = []
    for entry in document["ranges"]:
        if entry["master"] == host and not in_service:
            raise InvalidTopology(
                f"host {host} is the master of range {entry['range']}: fail it over first"
            )
        if host in replicas_of(entry) and not in_service:
            entry = with_replicas(entry, [r for r in replicas_of(entry) if r != host])
        ranges.append(entry)
    marked = marked - {host} if in_service else marked | {host}
    new = documents.validate(
        documents.SHARDS, {**document, "ranges": ranges, "out_of_service": sorted(marked)}
    )
    verb = "back in service" if in_service else "out of service"

    change = f"host {host} {verb}"
    step = publish_step(
        source, current, new, author=author, reason=change, change=change, hosts=(host,)
    )
    return Plan("host-service", change, [step], {"host": host, "in_service": in_service})
