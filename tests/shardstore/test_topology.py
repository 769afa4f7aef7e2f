"""The shard map: validation, routing, placement of new users."""

from __future__ import annotations

import copy
import json
import random
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardstore import InvalidTopology, ShardRange, Topology, UnknownShard
from shardstore.replicas import MOST, current_form


def document(**changes: Any) -> dict[str, Any]:
    """A valid 16-shard document over three ranges; ``changes`` replace top-level keys."""
    doc: dict[str, Any] = {
        "version": 7,
        "shard_count": 16,
        "hosts": {
            "MySQL001A": "mysql://10.0.0.1:3306",
            "MySQL001B": "mysql://10.0.0.2:3306",
            "MySQL002A": "mysql://10.0.0.3:3306",
            "MySQL002B": "mysql://10.0.0.4:3306",
        },
        "ranges": [
            {"range": [0, 3], "master": "MySQL001A", "replicas": ["MySQL001B"]},
            {"range": [4, 7], "master": "MySQL001B", "replicas": ["MySQL001A"]},
            {"range": [8, 15], "master": "MySQL002A", "replicas": ["MySQL002B"]},
        ],
        "open": [[0, 3], [8, 9]],
        "lookup_shards": 16,
    }
    doc.update(changes)
    return doc


def with_ranges(*ranges: tuple[int, int, str, str | None], **changes: Any) -> dict[str, Any]:
    entries = []
    for first, last, master, replica in ranges:
        entry: dict[str, Any] = {"range": [first, last], "master": master}
        if replica is not None:
            entry["replicas"] = [replica]
        entries.append(entry)
    return document(ranges=entries, **changes)


def test_valid_document_loads() -> None:
    topology = Topology.from_json(document())
    assert topology.version == 7
    assert topology.shard_count == 16
    assert [(r.first, r.last, r.master, r.replicas) for r in topology.ranges] == [
        (0, 3, "MySQL001A", ("MySQL001B",)),
        (4, 7, "MySQL001B", ("MySQL001A",)),
        (8, 15, "MySQL002A", ("MySQL002B",)),
    ]
    assert topology.open_ranges == ((0, 3), (8, 9))


def test_ranges_may_be_listed_out_of_order() -> None:
    doc = document()
    doc["ranges"].reverse()
    assert Topology.from_json(doc) == Topology.from_json(document())


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            with_ranges((0, 8, "MySQL001A", None), (8, 15, "MySQL002A", None)),
            r"range \[8, 15\] overlaps",
        ),
        (
            with_ranges((0, 15, "MySQL001A", None), (4, 7, "MySQL002A", None)),
            r"overlaps",
        ),
        (
            with_ranges(
                (0, 7, "MySQL001A", None), (0, 7, "MySQL002A", None), (8, 15, "MySQL001B", None)
            ),
            r"overlaps",
        ),
        (
            with_ranges((0, 6, "MySQL001A", None), (8, 15, "MySQL002A", None)),
            r"gap: shards 7\.\.7",
        ),
        (
            with_ranges((1, 15, "MySQL001A", None)),
            r"gap: shards 0\.\.0",
        ),
        (
            with_ranges((0, 7, "MySQL001A", None), (8, 13, "MySQL002A", None)),
            r"gap: shards 14\.\.15",
        ),
        (
            with_ranges((0, 7, "MySQL009A", None), (8, 15, "MySQL002A", None)),
            r"unknown master host 'MySQL009A'",
        ),
        (
            with_ranges((0, 7, "MySQL001A", "MySQL009B"), (8, 15, "MySQL002A", None)),
            r"unknown replica host 'MySQL009B'",
        ),
        (
            with_ranges((0, 7, "MySQL001A", "MySQL001A"), (8, 15, "MySQL002A", None)),
            r"master MySQL001A is also its own replica",
        ),
        (
            with_ranges((0, 65536, "MySQL001A", None), shard_count=65536),
            r"outside 0\.\.65535",
        ),
        (
            with_ranges((-1, 15, "MySQL001A", None)),
            r"outside 0\.\.65535",
        ),
        (
            with_ranges((0, 7, "MySQL001A", None), (8, 16, "MySQL002A", None)),
            r"outside the declared shard space 0\.\.15",
        ),
        (
            with_ranges((7, 3, "MySQL001A", None)),
            r"reversed",
        ),
        (document(open=[[0, 16]]), r"open range \[0, 16\] is outside the shard space 0\.\.15"),
        (document(open=[[0, 70000]]), r"open range"),
        (document(open=[]), r"open"),
        (document(shard_count=65537), r"shard_count 65537 is out of range"),
        (document(shard_count=0), r"shard_count"),
        (document(shard_count="16"), r"shard_count must be an integer"),
        (document(version=-1), r"version"),
        (document(hosts={}), r"hosts"),
        (document(ranges=[]), r"ranges"),
        (document(extra=1), r"unknown topology keys: extra"),
        (document(lookup_shards=17), r"lookup_shards"),
    ],
)
def test_invalid_documents(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidTopology, match=message):
        Topology.from_json(doc)
    with pytest.raises(InvalidTopology, match=message):
        Topology.from_json(json.dumps(doc))


@pytest.mark.parametrize("text", ["", "{", "[1, 2", "not json", "{'version': 1}"])
def test_not_json(text: str) -> None:
    with pytest.raises(InvalidTopology, match="not valid JSON"):
        Topology.from_json(text)


@pytest.mark.parametrize("text", ["[]", "3", '"x"', "null"])
def test_not_an_object(text: str) -> None:
    with pytest.raises(InvalidTopology, match="must be a JSON object"):
        Topology.from_json(text)


def test_mixed_backends_rejected() -> None:
    doc = document()
    doc["hosts"]["MySQL002B"] = "sqlite:///tmp/x"
    with pytest.raises(InvalidTopology, match="one backend"):
        Topology.from_json(doc)


def test_invalid_topology_is_a_value_error() -> None:
    assert issubclass(InvalidTopology, ValueError)


def test_load_missing_file(tmp_path: Any) -> None:
    with pytest.raises(InvalidTopology, match="cannot read topology file"):
        Topology.load(tmp_path / "nope.json")


def test_load_file(tmp_path: Any) -> None:
    path = tmp_path / "topology.json"
    path.write_text(json.dumps(document()))
    assert Topology.load(path) == Topology.from_json(document())


def test_routing() -> None:
    topology = Topology.from_json(document())
    assert topology.range_of(0) == ShardRange(0, 3, "MySQL001A", ("MySQL001B",))
    assert topology.range_of(3).master == "MySQL001A"
    assert topology.range_of(4) == ShardRange(4, 7, "MySQL001B", ("MySQL001A",))
    assert topology.master_of(7) == "MySQL001B"
    assert topology.master_of(8) == "MySQL002A"
    assert topology.master_of(15) == "MySQL002A"
    for shard in range(16):
        shard_range = topology.range_of(shard)
        assert shard in shard_range
        assert shard_range.first <= shard <= shard_range.last
    assert list(topology.shards_of("MySQL001B")) == [4, 5, 6, 7]
    assert list(topology.shards_of("MySQL002B")) == []  # a replica masters nothing


@pytest.mark.parametrize("shard", [16, 17, 4095, 65535, -1])
def test_unknown_shard(shard: int) -> None:
    topology = Topology.from_json(document())
    with pytest.raises(UnknownShard, match=str(shard)):
        topology.range_of(shard)
    with pytest.raises(UnknownShard):
        topology.master_of(shard)


def test_single_host() -> None:
    topology = Topology.single_host("sqlite:///tmp/x", shard_count=8)
    assert topology.shard_count == 8
    assert {topology.master_of(s) for s in range(8)} == {"db1"}
    assert topology.open_ranges == ((0, 7),)
    with pytest.raises(UnknownShard):
        topology.master_of(8)


def test_as_json_round_trip() -> None:
    topology = Topology.from_json(document())
    doc = topology.as_json()
    assert Topology.from_json(doc) == topology
    assert Topology.from_json(json.dumps(doc)) == topology
    assert Topology.from_json(json.dumps(doc)).as_json() == doc
    assert doc["ranges"][0] == {"range": [0, 3], "master": "MySQL001A", "replicas": ["MySQL001B"]}
    # Routing works on the reloaded copy too.
    assert Topology.from_json(doc).master_of(9) == "MySQL002A"


def test_loading_does_not_mutate_the_document() -> None:
    doc = document()
    doc["ranges"].reverse()
    before = copy.deepcopy(doc)
    Topology.from_json(doc)
    assert doc == before


@st.composite
def open_ranges(draw: st.DrawFn) -> tuple[int, list[list[int]]]:
    shard_count = draw(st.integers(1, 65536))
    count = draw(st.integers(1, 5))
    pairs = []
    for _ in range(count):
        first = draw(st.integers(0, shard_count - 1))
        last = draw(st.integers(first, min(shard_count - 1, first + draw(st.integers(0, 300)))))
        pairs.append([first, last])
    return shard_count, pairs


@given(open_ranges(), st.integers(0, 2**32))
def test_random_open_shard_stays_in_open_ranges(
    spec: tuple[int, list[list[int]]], seed: int
) -> None:
    shard_count, pairs = spec
    topology = Topology.from_json(
        {
            "version": 1,
            "shard_count": shard_count,
            "hosts": {"a": "sqlite:///x"},
            "ranges": [{"range": [0, shard_count - 1], "master": "a"}],
            "open": pairs,
            "lookup_shards": min(shard_count, 4096),
        }
    )
    rng = random.Random(seed)
    for _ in range(20):
        shard = topology.random_open_shard(rng)
        assert any(first <= shard <= last for first, last in pairs)


def test_random_open_shard_reaches_every_open_shard() -> None:
    topology = Topology.from_json(document(open=[[2, 3], [9, 9]]))
    rng = random.Random(1)
    assert {topology.random_open_shard(rng) for _ in range(500)} == {2, 3, 9}


def test_opening_shards_never_moves_a_lookup_bucket() -> None:
    """Lookup keys live on ``lookup_shard(bucket)``; growing the shard space (opening a new
    range) must not send any bucket to another shard, or every key there is lost."""
    small = document()
    grown = document(shard_count=32)
    grown["hosts"]["MySQL003A"] = "mysql://10.0.0.5:3306"
    grown["ranges"].append({"range": [16, 31], "master": "MySQL003A"})
    grown["open"] = [[16, 31]]
    before, after = Topology.from_json(small), Topology.from_json(grown)
    moved = [b for b in range(4096) if before.lookup_shard(b) != after.lookup_shard(b)]
    assert moved == [], f"{len(moved)} of 4096 buckets moved shard"


def test_lookup_shards_must_be_stated_below_4096_shards() -> None:
    doc = document()
    del doc["lookup_shards"]
    with pytest.raises(InvalidTopology, match="lookup_shards is required"):
        Topology.from_json(doc)
    full = document(shard_count=4096)
    full["ranges"][-1]["range"] = [8, 4095]
    del full["lookup_shards"]
    assert Topology.from_json(full).lookup_shards == 4096


def test_lookup_shards_survives_a_round_trip() -> None:
    topology = Topology.from_json(document(lookup_shards=8))
    assert topology.lookup_shard(4095) == 4095 % 8
    assert Topology.from_json(topology.as_json()).lookup_shards == 8


def test_out_of_service_hosts() -> None:
    spare = {**document()["hosts"], "MySQL003A": "mysql://10.0.0.5:3306"}
    topology = Topology.from_json(document(hosts=spare, out_of_service=["MySQL003A"]))
    assert topology.out_of_service == ("MySQL003A",)
    assert topology.as_json()["out_of_service"] == ["MySQL003A"]
    assert "out_of_service" not in Topology.from_json(document()).as_json()
    for host, message in [
        ("MySQL002A", "out of service but master of range \\[8, 15\\]"),
        ("MySQL002B", "out of service but replica of range \\[8, 15\\]"),
        ("MySQL009", "unknown host"),
    ]:
        with pytest.raises(InvalidTopology, match=message):
            Topology.from_json(document(hosts=spare, out_of_service=[host]))


def test_a_range_names_its_replicas_in_a_list_and_the_map_keeps_their_order() -> None:
    hosts = {**document()["hosts"], "MySQL001C": "mysql://10.0.0.5:3306"}
    doc = document(hosts=hosts)
    doc["ranges"][0]["replicas"] = ["MySQL001C", "MySQL001B"]
    topology = Topology.from_json(doc)
    assert topology.ranges[0].replicas == ("MySQL001C", "MySQL001B")
    assert topology.as_json()["ranges"][0]["replicas"] == ["MySQL001C", "MySQL001B"]
    doc["ranges"][2].pop("replicas")  # none: the key is left out
    assert "replicas" not in Topology.from_json(doc).as_json()["ranges"][2]
    with pytest.raises(InvalidTopology, match="out of service but replica of range"):
        Topology.from_json({**doc, "out_of_service": ["MySQL001C"]})


@pytest.mark.parametrize("old", ["replica", "slave"])
def test_a_range_an_older_release_wrote_with_one_replica_loads_as_a_list_of_one(old: str) -> None:
    written = document()
    for entry in written["ranges"]:
        entry[old] = entry.pop("replicas")[0]
    assert Topology.from_json(written) == Topology.from_json(document())
    reloaded = Topology.from_json(json.dumps(written)).as_json()
    assert reloaded == Topology.from_json(document()).as_json()
    assert current_form(written) == document()
    both = copy.deepcopy(written)
    both["ranges"][0]["slave" if old == "replica" else "replica"] = "MySQL001B"  # the same host
    assert Topology.from_json(both) == Topology.from_json(document())
    assert current_form(both) == document()


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"replica": "MySQL001B", "slave": "MySQL002B"}, "replica 'MySQL001B' and slave 'MySQL002B' differ"),
        ({"replicas": ["MySQL001B"], "replica": "MySQL001B"}, "replicas named under replicas and replica"),
        ({"replicas": "MySQL001B"}, "replicas must be a list of host names"),
        ({"replicas": ["MySQL001B", 7]}, "replicas must be a list of host names"),
        ({"replicas": ["MySQL001B", "MySQL001B"]}, "a replica is named twice"),
        ({"replicas": ["MySQL001B", "MySQL001A"]}, "master MySQL001A is also its own replica"),
        ({"replicas": ["MySQL001B", "MySQL009B"]}, "unknown replica host 'MySQL009B'"),
        ({"replicas": [f"H{n}" for n in range(MOST + 1)]}, f"at most {MOST} replicas"),
    ],
)  # fmt: skip
def test_a_range_naming_its_replicas_wrongly_is_refused(
    entry: dict[str, Any], message: str
) -> None:
    doc = document()
    doc["ranges"][0] = {"range": [0, 3], "master": "MySQL001A", **entry}
    with pytest.raises(InvalidTopology, match=r"range \[0, 3\]: " + re.escape(message)):
        Topology.from_json(doc)
    if "replicas" not in entry:
        assert current_form(doc) == doc  # left as it is, for validation to refuse
