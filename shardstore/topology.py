"""The shard map: which physical host serves each logical shard.

A topology is a JSON document, validated when loaded and never mutated after::

    {
      "version": 3,
      "shard_count": 4096,
      "hosts": {"MySQL001A": "mysql://10.0.0.1:3306", "MySQL001B": "mysql://10.0.0.2:3306"},
      "ranges": [{"range": [0, 4095], "master": "MySQL001A", "replicas": ["MySQL001B"]}],
      "open": [[0, 4095]]
    }

``ranges`` must tile ``0 .. shard_count - 1`` with no gap and no overlap (the
seeds' configuration table). ``open`` lists the ranges where new users land.
Reads and writes go to the master only; its replicas are hot backups for failover, and
its commits wait for one of them (``replicas.py``, which also reads older releases' single
``replica`` or ``slave``). ``out_of_service`` (optional) lists hosts kept in the map but
neither master nor replica of any range (a spare, or a host being replaced). ``read_only`` (optional)
lists shard ranges whose writes every process refuses for now: the short window
in which a split hands them to another host. ``domains`` (optional) names the MySQL GTID
domain a host writes in when it is not its server's default: a split's new master writes
in one of its own (``shardstore/control/reverse_stream.py``), and whatever reopens that
host after a restart sets it again (``shardstore reopen``). A range's ``durability``
(optional) is what its master's commits wait for (``durability.py``; strict if unnamed).
A process holds one Topology at a time and swaps it whole when it changes.
"""

from __future__ import annotations

import bisect
import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .durability import STRICT, Durability
from .exceptions import InvalidTopology, UnknownShard
from .ids import MAX_SHARD_ID
from .replicas import KEY as REPLICAS_KEY
from .replicas import parse as parse_replicas

#: The mod-shard hash space (md5 % 4096); buckets are spread over the first
#: ``lookup_shards`` shards and never move, whatever ranges open later.
MOD_BUCKETS = 4096
_KEYS = {"version", "shard_count", "hosts", "ranges", "open", "lookup_shards"} | {
    "out_of_service", "read_only", "domains",
}  # fmt: skip


def database_name(shard_id: int) -> str:
    """The database that holds a logical shard on its host: ``db00042`` (the seeds' names)."""
    return f"db{shard_id:05d}"


@dataclass(frozen=True)
class ShardRange:
    """A contiguous run of logical shards served by one master (and its hot backups)."""

    first: int
    last: int
    master: str
    replicas: tuple[str, ...] = ()
    #: What its master's commits wait for when no replica acknowledges (durability.py).
    durability: Durability = STRICT

    def __contains__(self, shard_id: object) -> bool:
        return isinstance(shard_id, int) and self.first <= shard_id <= self.last

    def as_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"range": [self.first, self.last], "master": self.master}
        if self.replicas:
            entry[REPLICAS_KEY] = list(self.replicas)
        entry.update(self.durability.entry())
        return entry


@dataclass(frozen=True)
class Topology:
    """A validated shard map. Build one with ``Topology.from_json`` or ``load``."""

    version: int
    shard_count: int
    hosts: Mapping[str, str]
    ranges: tuple[ShardRange, ...]
    open_ranges: tuple[tuple[int, int], ...]
    lookup_shards: int
    #: Hosts kept in the map but out of service: never a master, never a failover target.
    out_of_service: tuple[str, ...] = ()
    #: Shard ranges in a move's read-only window: writes to them are refused.
    read_only: tuple[tuple[int, int], ...] = ()
    #: The GTID domain of each host that writes in one other than its server's default.
    domains: Mapping[str, int] = field(default_factory=dict)

    # -- construction -----------------------------------------------------

    @classmethod
    def from_json(cls, document: Mapping[str, Any] | str) -> Topology:
        """Validate a topology document (a dict or JSON text) and build it."""
        if isinstance(document, str):
            try:
                document = json.loads(document)
            except json.JSONDecodeError as exc:
                raise InvalidTopology(f"topology is not valid JSON: {exc}") from None
        if not isinstance(document, Mapping):
            raise InvalidTopology("topology must be a JSON object")
        unknown = set(document) - _KEYS
        if unknown:
            raise InvalidTopology(f"unknown topology keys: {', '.join(sorted(unknown))}")

        version = _integer(document, "version", minimum=0)
        shard_count = _integer(document, "shard_count", minimum=1, maximum=MAX_SHARD_ID + 1)
        hosts = _hosts(document.get("hosts"))
        ranges = _ranges(document.get("ranges"), hosts, shard_count)
        open_ranges = _open_ranges(document.get("open"), shard_count)
        # Buckets must never move when shards are added later, so the bucket map
        # cannot follow shard_count: below 4096 shards it must be stated.
        if "lookup_shards" not in document and shard_count < MOD_BUCKETS:
            raise InvalidTopology(
                f"lookup_shards is required when shard_count ({shard_count}) is below {MOD_BUCKETS}"
            )
        lookup_shards = document.get("lookup_shards", MOD_BUCKETS)
        if (
            isinstance(lookup_shards, bool)
            or not isinstance(lookup_shards, int)
            or not 1 <= lookup_shards <= min(MOD_BUCKETS, shard_count)
        ):
            raise InvalidTopology(
                f"lookup_shards must be an int in 1..{min(MOD_BUCKETS, shard_count)}"
            )
        out_of_service = _out_of_service(document.get("out_of_service", []), hosts, ranges)
        read_only = tuple(_pair(entry, "read_only range") for entry in _list(document, "read_only"))
        topology = cls(
            version,
            shard_count,
            hosts,
            ranges,
            open_ranges,
            lookup_shards,
            out_of_service,
            read_only,
            _domains(document.get("domains", {}), hosts),
        )
        object.__setattr__(topology, "_starts", [r.first for r in ranges])
        return topology

    @classmethod
    def load(cls, path: str | Path) -> Topology:
        """Read and validate a topology file."""
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise InvalidTopology(f"cannot read topology file {path}: {exc}") from None
        return cls.from_json(text)

    @classmethod
    def single_host(
        cls, address: str, *, shard_count: int = 4096, host: str = "db1", version: int = 1
    ) -> Topology:
        """All shards on one host: the embedded default and most tests."""
        return cls.from_json(
            {
                "version": version,
                "shard_count": shard_count,
                "hosts": {host: address},
                "ranges": [{"range": [0, shard_count - 1], "master": host}],
                "open": [[0, shard_count - 1]],
                "lookup_shards": min(MOD_BUCKETS, shard_count),
            }
        )

    def as_json(self) -> dict[str, Any]:
        """The document this topology was built from (normalized)."""
        return {
            "version": self.version,
            "shard_count": self.shard_count,
            "hosts": dict(self.hosts),
            "ranges": [r.as_json() for r in self.ranges],
            "open": [list(r) for r in self.open_ranges],
            "lookup_shards": self.lookup_shards,
            **({"out_of_service": list(self.out_of_service)} if self.out_of_service else {}),
            **({"read_only": [list(r) for r in self.read_only]} if self.read_only else {}),
            **({"domains": dict(self.domains)} if self.domains else {}),
        }

    # -- routing ----------------------------------------------------------

    def range_of(self, shard_id: int) -> ShardRange:
        """The range that holds ``shard_id``."""
        index = bisect.bisect_right(self._starts, shard_id) - 1  # type: ignore[attr-defined]
        if index < 0 or shard_id > self.ranges[index].last:
            raise UnknownShard(f"shard {shard_id} is in no range of topology v{self.version}")
        return self.ranges[index]

    def master_of(self, shard_id: int) -> str:
        """The name of the host that serves ``shard_id`` (all reads and writes go there)."""
        return self.range_of(shard_id).master

    def is_read_only(self, shard_id: int) -> bool:
        """Whether writes to ``shard_id`` are refused for now (a move's read-only window)."""
        return any(first <= shard_id <= last for first, last in self.read_only)

    def shards_of(self, host: str) -> Iterator[int]:
        """Every shard whose master is ``host``."""
        for shard_range in self.ranges:
            if shard_range.master == host:
                yield from range(shard_range.first, shard_range.last + 1)

    def lookup_shard(self, bucket: int) -> int:
        """The shard that holds a mod-shard bucket."""
        return bucket % self.lookup_shards

    def random_open_shard(self, rng: random.Random | None = None) -> int:
        """A shard for a new user, uniformly among the open ranges."""
        choose = rng.randrange if rng is not None else random.randrange
        sizes = [last - first + 1 for first, last in self.open_ranges]
        pick = choose(sum(sizes))
        for (first, _last), size in zip(self.open_ranges, sizes, strict=False):
            if pick < size:
                return first + pick
            pick -= size
        raise AssertionError("unreachable")  # pragma: no cover


# -- validation helpers -----------------------------------------------------


def _integer(
    document: Mapping[str, Any], key: str, *, minimum: int, maximum: int | None = None
) -> int:
    value = document.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTopology(f"{key} must be an integer")
    if value < minimum or (maximum is not None and value > maximum):
        upper = "" if maximum is None else maximum
        raise InvalidTopology(f"{key} {value} is out of range {minimum}..{upper}")
    return value


def _list(document: Mapping[str, Any], key: str) -> list[Any]:
    value = document.get(key, [])
    if not isinstance(value, list):
        raise InvalidTopology(f"{key} must be a list")
    return value


def _hosts(hosts: object) -> dict[str, str]:
    if not isinstance(hosts, Mapping) or not hosts:
        raise InvalidTopology("hosts must be a non-empty object of name -> address")
    schemes = set()
    for name, address in hosts.items():
        if not isinstance(address, str) or "://" not in address:
            raise InvalidTopology(
                f"host {name}: address must look like mysql://host:port or sqlite:///dir"
            )
        schemes.add(address.split("://", 1)[0])
    if len(schemes) > 1:
        raise InvalidTopology(f"all hosts must use one backend, got {', '.join(sorted(schemes))}")
    return dict(hosts)


def _pair(value: object, what: str) -> tuple[int, int]:
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise InvalidTopology(f"{what} must be a pair of integers [first, last]")
    first, last = value
    if not 0 <= first <= last <= MAX_SHARD_ID:
        raise InvalidTopology(f"{what} [{first}, {last}] is outside 0..{MAX_SHARD_ID} or reversed")
    return first, last


def _ranges(entries: object, hosts: Mapping[str, str], shard_count: int) -> tuple[ShardRange, ...]:
    if not isinstance(entries, list) or not entries:
        raise InvalidTopology("ranges must be a non-empty list")
    ranges: list[ShardRange] = []
    policies: dict[Any, Durability] = {}  # master -> its ranges' policy
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise InvalidTopology("each range must be an object with range, master and replicas")
        first, last = _pair(entry.get("range"), "range")
        where = f"range [{first}, {last}]"
        master = entry.get("master")
        if master not in hosts:
            raise InvalidTopology(f"{where}: unknown master host {master!r}")
        replicas = tuple(parse_replicas(entry, where, hosts=hosts))
        durability = Durability.of_entry(entry)
        if policies.setdefault(master, durability) != durability:  # one master, one policy
            raise InvalidTopology(f"{where}: its master {master}'s ranges name two durabilities")
        ranges.append(ShardRange(first, last, str(master), replicas, durability))
    ranges.sort(key=lambda r: r.first)
    expected = 0
    for shard_range in ranges:
        where = f"range [{shard_range.first}, {shard_range.last}]"
        if shard_range.first < expected:
            raise InvalidTopology(f"{where} overlaps the range before it")
        if shard_range.first > expected:
            raise InvalidTopology(
                f"gap: shards {expected}..{shard_range.first - 1} are in no range"
            )
        if shard_range.last >= shard_count:
            raise InvalidTopology(
                f"{where} is outside the declared shard space 0..{shard_count - 1}"
            )
        expected = shard_range.last + 1
    if expected != shard_count:
        raise InvalidTopology(f"gap: shards {expected}..{shard_count - 1} are in no range")
    return tuple(ranges)


def _open_ranges(entries: object, shard_count: int) -> tuple[tuple[int, int], ...]:
    if not isinstance(entries, list) or not entries:
        raise InvalidTopology("open must be a non-empty list of [first, last] ranges")
    pairs = []
    for entry in entries:
        first, last = _pair(entry, "open range")
        if last >= shard_count:
            raise InvalidTopology(
                f"open range [{first}, {last}] is outside the shard space 0..{shard_count - 1}"
            )
        pairs.append((first, last))
    return tuple(pairs)


def _out_of_service(
    entries: object, hosts: Mapping[str, str], ranges: tuple[ShardRange, ...]
) -> tuple[str, ...]:
    if not isinstance(entries, list) or not all(isinstance(h, str) for h in entries):
        raise InvalidTopology("out_of_service must be a list of host names")
    for host in entries:
        if host not in hosts:
            raise InvalidTopology(f"out_of_service names unknown host {host!r}")
        serving = [r for r in ranges if host == r.master or host in r.replicas]
        if serving:
            role = "master" if serving[0].master == host else "replica"
            raise InvalidTopology(
                f"host {host} is out of service but {role} of range"
                f" [{serving[0].first}, {serving[0].last}]"
            )
    return tuple(sorted(set(entries)))


#: MariaDB's ``gtid_domain_id`` is a 32-bit number; 0 is every server's default.
MAX_DOMAIN = 2**32 - 1


def _domains(entries: object, hosts: Mapping[str, str]) -> dict[str, int]:
    if not isinstance(entries, Mapping):
        raise InvalidTopology("domains must be an object of host name -> GTID domain")
    for host, domain in entries.items():
        if host not in hosts:
            raise InvalidTopology(f"domains names unknown host {host!r}")
        if isinstance(domain, bool) or not isinstance(domain, int) or not 1 <= domain <= MAX_DOMAIN:
            raise InvalidTopology(
                f"domains: host {host}: a GTID domain is an int in 1..{MAX_DOMAIN}"
            )
    if len(set(entries.values())) != len(entries):
        raise InvalidTopology("domains: two hosts write in one GTID domain")
    return dict(entries)
