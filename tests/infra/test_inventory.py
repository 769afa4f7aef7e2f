"""Terraform's outputs become Puppet's generated Hiera level and the first config documents."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from shardstore import Topology
from shardstore.control.replacement import spares
from shardstore.redis_shards import VSHARDS
from toolkit.inventory import InventoryError, build, main, split_evenly

RELEASE = "2026.11.23-0a1b2c3"


def _member(name: str, address: str, zone: str) -> dict[str, str]:
    return {"name": name, "address": address, "zone": zone}


def outputs(mysql_pairs: int = 3) -> dict[str, Any]:
    """``terraform output -json`` of a small deploy: each output as {"value", "type"}."""
    values: dict[str, Any] = {
        "environment": "staging",
        "region": "eu-west-1",
        "site_url": "https://staging.pinboard.example",
        "alb_dns_name": "pinboard-staging-1.eu-west-1.elb.amazonaws.com",
        "media_bucket": "pinboard-staging-media",
        "media_domain": "d111111abcdef8.cloudfront.net",
        "artifacts_bucket": "pinboard-staging-artifacts",
        "backup_store": "s3://pinboard-staging-backups-1/staging",
        "backup_kms_key": "arn:aws:kms:eu-west-1:1:key/0b1f5c1e-1111-4222-8333-944445555666",
        "ssm_prefix": "/pinboard/staging/",
        "fenced_security_group": "sg-0f1e2d3c4b5a69788",
        "mysql_pairs": [
            {
                "name": f"mysql{n:03d}",
                "master": _member(f"mysql{n:03d}a", f"10.0.10.{n}", "eu-west-1a"),
                "replicas": [
                    _member(f"mysql{n:03d}b", f"10.0.11.{n}", "eu-west-1b"),
                    _member(f"mysql{n:03d}c", f"10.0.10.{100 + n}", "eu-west-1a"),
                ],
            }
            for n in range(1, mysql_pairs + 1)
        ],
        "mysql_spares": [_member("mysqlspare01", "10.0.10.90", "eu-west-1a")],
        "redis_pairs": [
            {
                "name": "redis001",
                "primary": _member("redis001a", "10.0.10.50", "eu-west-1a"),
                "replica": _member("redis001b", "10.0.11.50", "eu-west-1b"),
            }
        ],
        "broker": {"name": "broker001", "address": "10.0.10.60"},
        "control_database": {
            "address": "pinboard-staging-control.abc.eu-west-1.rds.amazonaws.com",
            "port": 3306,
            "name": "pinboard_control",
            "secret_arn": "arn:aws:secretsmanager:eu-west-1:1:secret:rds!db-1",
        },
        "memcached_pools": {
            pool: [f"10.0.10.{70 + n}:11211", f"10.0.11.{70 + n}:11211"]
            for n, pool in enumerate(("users", "boards", "pins", "lists"))
        },
        "zookeeper": [
            {
                "name": f"zk{n}",
                "id": n,
                "address": f"10.0.1{n % 2}.9{n}",
                "zone": f"eu-west-1{'ab'[n % 2]}",
            }
            for n in (1, 2, 3)
        ],
    }
    return {name: {"value": value, "type": "any"} for name, value in values.items()}


def test_the_shards_are_spread_evenly_over_the_pairs_and_the_map_holds_no_secret() -> None:
    files = build(outputs(mysql_pairs=3), RELEASE)
    topology = Topology.from_json(files["shards.json"])
    assert topology.shard_count == 4096
    assert [(r.first, r.last, r.master, r.replicas) for r in topology.ranges] == [
        (0, 1365, "mysql001a", ("mysql001b", "mysql001c")),
        (1366, 2730, "mysql002a", ("mysql002b", "mysql002c")),
        (2731, 4095, "mysql003a", ("mysql003b", "mysql003c")),
    ]
    assert topology.hosts["mysql002b"] == "mysql://10.0.11.2:3306"  # no user, no password
    assert topology.open_ranges == ((0, 4095),)
    assert spares(files["shards.json"]) == ["mysqlspare01"]  # the guard's, serving no range


def test_the_redis_map_and_the_pools() -> None:
    files = build(outputs(), RELEASE)
    assert files["redis.json"]["ranges"] == [{"range": [0, VSHARDS - 1], "instance": "redis001a"}]
    assert files["redis.json"]["instances"] == {"redis001a": "redis://10.0.10.50:6379/0"}
    assert files["caches.json"]["pools"]["pins"] == ["10.0.10.72:11211", "10.0.11.72:11211"]


def test_the_written_hiera_level_is_yaml_that_puppet_reads(tmp_path: Path) -> None:
    assert (
        main([_saved(tmp_path, outputs()), "--release", RELEASE, "--out", str(tmp_path / "out")])
        == 0
    )
    data = yaml.safe_load((tmp_path / "out" / "deploy.yaml").read_text())
    assert data["pinboard::site_domain"] == "staging.pinboard.example"
    assert data["pinboard::hosts"]["mysql001b"] == "10.0.11.1"
    assert data["pinboard::hosts"]["memcached-pins-2"] == "10.0.11.72"
    assert data["pinboard::zookeeper"][2] == {"name": "zk3", "id": 3, "address": "10.0.11.93"}
    assert data["pinboard::mysql_pairs"][0] == {"master": "mysql001a", "replicas": ["mysql001b", "mysql001c"]}  # fmt: skip
    assert data["pinboard::mysql_spares"] == ["mysqlspare01"]
    assert data["pinboard::hosts"]["mysqlspare01"] == "10.0.10.90"
    assert data["pinboard::release"] == RELEASE
    assert data["pinboard::fenced_security_group"] == "sg-0f1e2d3c4b5a69788"
    assert data["pinboard::backup_store"] == "s3://pinboard-staging-backups-1/staging"
    assert data["pinboard::backup_kms_key"].startswith("arn:aws:kms:eu-west-1:1:key/")
    assert data["pinboard::control_database"] == {  # no secret: the site has its own login
        "address": "pinboard-staging-control.abc.eu-west-1.rds.amazonaws.com",
        "port": 3306,
        "name": "pinboard_control",
    }
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "caches.json",
        "deploy.yaml",
        "redis.json",
        "shards.json",
    ]


@pytest.mark.parametrize(
    ("break_it", "message"),
    [
        (
            lambda o: o["mysql_pairs"]["value"][1]["replicas"][0].update(zone="eu-west-1a"),
            "mysql002a and mysql002b are both in eu-west-1a",
        ),
        (
            lambda o: o["mysql_pairs"]["value"][1]["replicas"][1].update(zone="eu-west-1b"),
            "the replicas of mysql002a share a zone, eu-west-1b",
        ),
        (
            lambda o: o["mysql_pairs"]["value"][0].update(replicas=[]),
            "mysql001a has no replica",
        ),
        (
            lambda o: o["redis_pairs"]["value"][0]["replica"].update(zone="eu-west-1a"),
            "redis001a and redis001b are both in eu-west-1a",
        ),
        (
            lambda o: o["memcached_pools"]["value"].pop("lists"),
            "no memcached server for the pools lists",
        ),
        (lambda o: o["mysql_pairs"].update(value=[]), "no MySQL pair"),
        (lambda o: o["zookeeper"]["value"].pop(), "ZooKeeper needs three nodes"),
        (lambda o: o.pop("ssm_prefix"), "the outputs have no 'ssm_prefix'"),
        (
            lambda o: o.pop("fenced_security_group"),
            "the outputs have no 'fenced_security_group'",
        ),
        (lambda o: o.pop("backup_store"), "the outputs have no 'backup_store'"),
    ],
)
def test_outputs_that_describe_no_sound_fleet_are_refused_and_nothing_is_written(
    break_it: Any, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = copy.deepcopy(outputs())
    break_it(broken)
    with pytest.raises(InventoryError, match=message):
        build(broken, RELEASE)
    assert (
        main([_saved(tmp_path, broken), "--release", RELEASE, "--out", str(tmp_path / "out")]) == 1
    )
    assert message.split("'")[0] in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("count", "parts"), [(4096, 1), (4096, 3), (4096, 8), (8192, 5), (7, 7)])
def test_split_evenly_tiles_the_ids(count: int, parts: int) -> None:
    ranges = split_evenly(count, parts)
    assert ranges[0][0] == 0 and ranges[-1][1] == count - 1
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(ranges))
    sizes = {last - first + 1 for first, last in ranges}
    assert max(sizes) - min(sizes) <= 1


def _saved(tmp_path: Path, data: dict[str, Any]) -> str:
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(data))
    return str(path)
