"""From Terraform's outputs to what the fleet is configured with.

    terraform -chdir=infra/terraform output -json > outputs.json
    python -m toolkit.inventory outputs.json --release 2026.11.23-0a1b2c3 --out build/staging

writes, in ``--out``:

``deploy.yaml``   Puppet's generated Hiera level (infra/puppet/hiera.yaml): the hosts by
                  name, the MySQL pairs, the ZooKeeper ensemble, the broker, the control
                  database, the domains, the artifacts bucket, the fenced security group
                  (the worker hosts' fence command) and the release web and worker hosts
                  run;
``shards.json``   the first shard map: the 4096 shards in equal contiguous ranges over
                  the MySQL pairs (``mysql001a`` master, ``mysql001b`` its replica), all
                  open to new pinners; host addresses name no user or password (the site
                  logs in as ``PINBOARD_MYSQL_LOGIN``), so the map in ZooKeeper holds no
                  secret;
``redis.json``    the Redis map: the 8192 virtual shards in equal ranges over the
                  primaries of the Redis pairs (each replica is a hot standby);
``caches.json``   the memcached pools.

Each document is validated as ``topology publish`` would validate it, and a MySQL or
Redis pair whose two members share an availability zone is refused: losing one zone
must never take both.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pinboard.catalog import CACHE_POOLS
from shardstore import InvalidTopology
from shardstore.control import documents
from shardstore.redis_shards import VSHARDS
from shardstore.topology import MOD_BUCKETS

SHARDS = MOD_BUCKETS  # the seeds' 4096 logical shards
MYSQL_PORT = 3306
REDIS_PORT = 6379


class InventoryError(ValueError):
    """Terraform's outputs do not describe a fleet the site can run on."""


def split_evenly(count: int, parts: int) -> list[tuple[int, int]]:
    """``count`` ids in ``parts`` contiguous ranges whose sizes differ by one at most."""
    size, extra = divmod(count, parts)
    ranges, first = [], 0
    for n in range(parts):
        last = first + size + (n < extra) - 1
        ranges.append((first, last))
        first = last + 1
    return ranges


def shard_map(pairs: Sequence[Mapping[str, Any]], spares: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:  # fmt: skip
    """The first shard map: the ranges split evenly over the pairs, and the spares (the
    guard's, for a replica that dies) named as hosts that serve no range."""
    if not pairs:
        raise InventoryError("no MySQL pair in the outputs")
    hosts = {spare["name"]: f"mysql://{spare['address']}:{MYSQL_PORT}" for spare in spares}
    ranges = []
    for pair, (first, last) in zip(pairs, split_evenly(SHARDS, len(pairs)), strict=True):
        master, replicas = _mysql_members(pair)
        for member in (master, *replicas):
            hosts[member["name"]] = f"mysql://{member['address']}:{MYSQL_PORT}"
        ranges.append({"range": [first, last], "master": master["name"], "replicas": [r["name"] for r in replicas]})  # fmt: skip
    document = {
        "version": 0,
        "shard_count": SHARDS,
        "lookup_shards": SHARDS,
        "hosts": hosts,
        "ranges": ranges,
        "open": [[0, SHARDS - 1]],
    }
    return documents.validate(documents.SHARDS, document)


def redis_map(pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    if not pairs:
        raise InventoryError("no Redis pair in the outputs")
    instances: dict[str, str] = {}
    ranges = []
    for pair, (first, last) in zip(pairs, split_evenly(VSHARDS, len(pairs)), strict=True):
        primary, _replica = _members(pair, "primary", "replica")
        instances[primary["name"]] = f"redis://{primary['address']}:{REDIS_PORT}/0"
        ranges.append({"range": [first, last], "instance": primary["name"]})
    return documents.validate(documents.REDIS, {"version": 0, "instances": instances, "ranges": ranges})  # fmt: skip


def cache_pools(pools: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    missing = [p for p in CACHE_POOLS if not pools.get(p)]
    if missing:
        raise InventoryError(f"no memcached server for the pools {', '.join(missing)}")
    return documents.validate(
        documents.CACHES,
        {"version": 0, "pools": {p: list(pools[p]) for p in CACHE_POOLS}},
    )


def hiera(outputs: Mapping[str, Any], release: str) -> dict[str, Any]:
    """The generated Hiera level: what Puppet needs to know of the rest of the fleet."""
    hosts: dict[str, str] = {}
    for pair in outputs["mysql_pairs"]:
        master, replicas = _mysql_members(pair)
        for member in (master, *replicas):
            hosts[member["name"]] = member["address"]
    spares = outputs.get("mysql_spares", [])
    for spare in spares:
        hosts[spare["name"]] = spare["address"]
    for pair in outputs["redis_pairs"]:
        for member in _members(pair, "primary", "replica"):
            hosts[member["name"]] = member["address"]
    for node in outputs["zookeeper"]:
        hosts[node["name"]] = node["address"]
    for pool, servers in outputs["memcached_pools"].items():  # named as Terraform names them
        for n, server in enumerate(servers, 1):
            hosts[f"memcached-{pool}-{n}"] = server.rpartition(":")[0]
    broker = outputs["broker"]
    hosts[broker["name"]] = broker["address"]
    zones = {node["zone"] for node in outputs["zookeeper"]}
    if len(outputs["zookeeper"]) != 3 or len(zones) < 2:
        raise InventoryError("ZooKeeper needs three nodes over at least two zones")
    return {
        "pinboard::environment": outputs["environment"],
        "pinboard::region": outputs["region"],
        "pinboard::site_domain": _domain(outputs["site_url"]),
        "pinboard::media_domain": outputs["media_domain"],
        "pinboard::media_bucket": outputs["media_bucket"],
        "pinboard::ssm_prefix": outputs["ssm_prefix"],
        "pinboard::artifacts_bucket": outputs["artifacts_bucket"],
        "pinboard::backup_store": outputs["backup_store"],
        "pinboard::backup_kms_key": outputs["backup_kms_key"],
        "pinboard::release": release,
        "pinboard::broker_address": broker["address"],
        "pinboard::fenced_security_group": outputs["fenced_security_group"],
        "pinboard::control_database": {
            key: outputs["control_database"][key] for key in ("address", "port", "name")
        },
        "pinboard::zookeeper": [
            {"name": n["name"], "id": int(n["id"]), "address": n["address"]}
            for n in outputs["zookeeper"]
        ],
        "pinboard::mysql_pairs": [
            {"master": p["master"]["name"], "replicas": [r["name"] for r in p["replicas"]]}
            for p in outputs["mysql_pairs"]
        ],
        "pinboard::mysql_spares": [spare["name"] for spare in spares],
        "pinboard::redis_pairs": [
            {"primary": p["primary"]["name"], "replica": p["replica"]["name"]}
            for p in outputs["redis_pairs"]
        ],
        "pinboard::hosts": hosts,
    }


def build(outputs: Mapping[str, Any], release: str) -> dict[str, Any]:
    """Every file ``--out`` receives, by name (``terraform output -json`` gives each output
    as ``{"value": ..., "type": ...}``; plain values are taken as they are)."""
    values = {k: v["value"] if isinstance(v, dict) and "value" in v else v for k, v in outputs.items()}  # fmt: skip
    try:
        return {
            "deploy.yaml": hiera(values, release),
            "shards.json": shard_map(values["mysql_pairs"], values.get("mysql_spares", [])),
            "redis.json": redis_map(values["redis_pairs"]),
            "caches.json": cache_pools(values["memcached_pools"]),
        }
    except KeyError as missing:
        raise InventoryError(f"the outputs have no {missing}") from None


def write(files: Mapping[str, Any], directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in files.items():
        path = directory / name
        text = json.dumps(content, indent=2, sort_keys=True) + "\n"
        if name.endswith(".yaml"):  # JSON is YAML; Hiera reads it as such
            text = "# Generated by `python -m toolkit.inventory` from Terraform's outputs.\n" + text
        path.write_text(text)
        written.append(path)
    return written


def _members(pair: Mapping[str, Any], lead: str, follower: str) -> tuple[dict[str, Any], dict[str, Any]]:  # fmt: skip
    first, second = dict(pair[lead]), dict(pair[follower])
    if first.get("zone") == second.get("zone"):
        raise InventoryError(
            f"{first['name']} and {second['name']} are both in {first.get('zone')}:"
            " the two members of a pair must be in different zones"
        )
    return first, second


def _mysql_members(pair: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A MySQL range's master and replicas: the first replica in another zone than the
    master, and no two replicas in one zone, so a zone's loss leaves a replica."""
    master, replicas = dict(pair["master"]), [dict(r) for r in pair["replicas"]]
    if not replicas:
        raise InventoryError(f"{master['name']} has no replica")
    _members({"master": master, "replica": replicas[0]}, "master", "replica")
    zones = [r.get("zone") for r in replicas]
    if len(set(zones)) != len(zones):
        shared = next(zone for zone in zones if zones.count(zone) > 1)
        raise InventoryError(f"the replicas of {master['name']} share a zone, {shared}")
    return master, replicas


def _domain(url: str) -> str:
    return url.split("://", 1)[-1].split("/", 1)[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.inventory", description=__doc__.split("\n\n")[0])  # fmt: skip
    parser.add_argument("outputs", type=Path, help="`terraform output -json` saved to a file ('-': stdin)")  # fmt: skip
    parser.add_argument("--release", required=True, help="the release web and worker hosts run")
    parser.add_argument("--out", type=Path, required=True, help="the directory to write to")
    args = parser.parse_args(argv)
    text = sys.stdin.read() if str(args.outputs) == "-" else args.outputs.read_text()
    try:
        files = build(json.loads(text), args.release)
    except (InventoryError, InvalidTopology, json.JSONDecodeError) as error:
        print(f"inventory: {error}", file=sys.stderr)
        return 1
    for path in write(files, args.out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
