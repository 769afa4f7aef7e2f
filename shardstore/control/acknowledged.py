"""What each master's replicas had received, recorded often and durably: the position an
emergency failover holds its candidate to (``emergency.py``).

Masters run semi-synchronously (``AFTER_SYNC``, no fallback), so a commit is acknowledged
to its client only once a replica has it in its relay log. An emergency failover compares
the replicas that answer, but a relay log can be lost (a replica restarted with its threads
starting at boot, or its replication stopped and started by hand, while its master is dead:
``relay_log.py``), and the replica that had received the most may be down too. So the
fleet probe (``pinboard/ops/fleet_metrics.py``, at each scrape of the metrics) records,
for each master of the shard map it serves, the highest position, domain by domain, that
any replica following that master had *received* (``Gtid_IO_Pos``), in the config source
(``ConfigSource.record``: a file fsynced, or a znode, which every entry point reads).

Not the master's own ``gtid_binlog_pos``: with ``AFTER_SYNC`` it holds commits no replica
has acknowledged yet (their clients still wait), and a candidate that lacks only those
lacks nothing a client saw acknowledged. A replica's received position holds only what was
sent to it, so a candidate that received less than some replica had when the probe read it
lacks a write that may have been acknowledged: the rule ``emergency_checks.choose`` applies
among the replicas that answer, extended to those that do not and to the past of one that
lost its relay log. (The probe reads a replica's position once it has the transaction,
possibly just before its acknowledgement reached the master, as ``choose`` does.)

A record holds while the host has been a master since it was made: GTID sequence numbers
only grow within a domain, except across a failover that lost writes, after which a new
master writes the lost numbers again under its own server id. So a record is set aside
(``last``) when a map version published since it names the host master of nothing: it
was failed over, and a newer record is made once it is a master again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from . import documents
from .config_source import ConfigSource, NotPublished, Revision, now
from .mysql_hosts import ReplicaStatus, endpoint, gtid_domains

#: The records' kind in the config source: one record per master, by its name.
KIND = "acknowledged"


@dataclass(frozen=True)
class Record:
    """What the replicas of ``master`` had received when the fleet probe read them."""

    master: str
    received: str  # the highest position of any, domain by domain
    replicas: dict[str, str]  # what each had received
    version: int  # the shard map's version the probe served
    at: str  # when (ISO 8601, UTC)

    def as_json(self) -> dict[str, Any]:
        return {
            "master": self.master,
            "received": self.received,
            "replicas": dict(self.replicas),
            "version": self.version,
            "at": self.at,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Record:
        return cls(
            str(data["master"]),
            str(data["received"]),
            {str(k): str(v) for k, v in dict(data.get("replicas", {})).items()},
            int(data["version"]),
            str(data.get("at", "")),
        )


def highest(positions: Iterable[str]) -> str:
    """The highest of GTID positions, domain by domain (``0-1-5,1-3-2`` and ``0-2-7``:
    ``0-2-7,1-3-2``)."""
    best: dict[int, tuple[int, int]] = {}
    for position in positions:
        for domain, (server, sequence) in gtid_domains(position).items():
            if sequence > best.get(domain, (0, -1))[1]:
                best[domain] = (server, sequence)
    return ",".join(f"{d}-{s}-{n}" for d, (s, n) in sorted(best.items()))


def observe(
    document: Mapping[str, Any], replication: Mapping[str, ReplicaStatus | None]
) -> list[Record]:
    """The records of the masters of ``document`` (a shard map), from each host's
    replication as read now (by host name; None: it replicates from no one, or was not
    read): a master whose replicas show nothing received has none."""
    hosts = document["hosts"]
    found = []
    for master in sorted({r["master"] for r in document["ranges"]}):
        source = "{}:{}".format(*endpoint(hosts[master]))
        replicas = {
            name: status.received
            for name, status in sorted(replication.items())
            if status is not None and status.source == source and status.received
        }
        if replicas:
            received = highest(replicas.values())
            found.append(Record(master, received, replicas, int(document["version"]), now()))
    return found


def record(
    source: ConfigSource,
    document: Mapping[str, Any],
    replication: Mapping[str, ReplicaStatus | None],
) -> list[Record]:
    """Record what ``observe`` finds, each record in place of its master's last one."""
    found = observe(document, replication)
    for each in found:
        source.record(KIND, each.master, each.as_json())
    return found


def last(source: ConfigSource, host: str, current: Revision) -> Record | None:
    """The last record of ``host`` if it still holds: made under a version of the map
    ``current`` or older, and every version since names ``host`` master of some range."""
    data = source.recorded(KIND, host)
    if data is None:
        return None
    found = Record.from_json(data)
    if found.version > current.version:
        return None
    for version in range(found.version, current.version):
        try:
            document = source.revision(documents.SHARDS, version).document
        except NotPublished:
            return None
        if not any(r["master"] == host for r in document["ranges"]):
            return None
    return found if any(r["master"] == host for r in current.document["ranges"]) else None


def gap(found: Record, received: str) -> str:
    """What ``received`` lacks of the record, domain by domain ("" if nothing)."""
    have = gtid_domains(received)
    lacking = []
    for domain, (server, sequence) in sorted(gtid_domains(found.received).items()):
        had = have.get(domain)
        if had is None or had[1] < sequence:
            after = f"after {domain}-{had[0]}-{had[1]}" if had else "of the domain"
            lacking.append(f"domain {domain}: the transactions {after} up to {domain}-{server}-{sequence}")  # fmt: skip
    return "; ".join(lacking)


def refusal(host: str, name: str, found: Record | None, received: str) -> str:
    """Why ``name``, which received ``received``, may not replace ``host`` without losing
    what ``host``'s replicas had received by the last record ("" if it lacks nothing)."""
    lacking = gap(found, received) if found is not None else ""
    if found is None or not lacking:
        return ""
    by = ", ".join(f"{replica} {position}" for replica, position in sorted(found.replicas.items()))
    return (
        f"{name} has received {received or 'nothing'}, less than {host}'s replicas had"
        f" received at {found.at} (the fleet probe's record, map v{found.version}: {by})."
        f" Acknowledged writes may be lost: {lacking}"
    )
