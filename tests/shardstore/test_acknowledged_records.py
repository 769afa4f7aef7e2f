"""The fleet probe's records of what each master's replicas had received
(``shardstore/control/acknowledged.py``), in a directory of files and in a real ZooKeeper:
the highest position domain by domain, one record per master in place of the last, and
a record set aside once a map since names its host master of nothing."""

from __future__ import annotations

from typing import Any

from shardstore.control import acknowledged
from shardstore.control.config_source import ConfigSource
from shardstore.control.mysql_hosts import ReplicaStatus


def shard_map(master: str, replica: str) -> dict[str, Any]:
    return {
        "version": 0,
        "shard_count": 4,
        "hosts": {
            "A": "mysql://10.0.0.1:3306",
            "B": "mysql://10.0.0.2:3306",
            "C": "mysql://10.0.0.3:3306",
        },
        "ranges": [{"range": [0, 3], "master": master, "replica": replica}],
        "open": [[0, 3]],
        "lookup_shards": 4,
    }


def following(source: str, received: str) -> ReplicaStatus:
    return ReplicaStatus(source, True, True, 0, "", "Yes", received)


def test_highest_is_taken_domain_by_domain() -> None:
    assert acknowledged.highest(["0-1-5,1-3-2", "0-2-7", ""]) == "0-2-7,1-3-2"
    assert acknowledged.highest([]) == ""


def test_a_record_holds_the_highest_any_replica_received_and_names_the_gap(
    source: ConfigSource,
) -> None:
    source.publish("shards", shard_map("A", "B"), author="ops", reason="test")
    current = source.current("shards")
    seen = {
        "A": None,  # the master replicates from no one
        "B": following("10.0.0.1:3306", "0-1-12,1-1-3"),
        "C": following("10.0.0.1:3306", "0-1-14"),  # a second replica, ahead in domain 0
    }
    [made] = acknowledged.record(source, current.document, seen)
    assert (made.master, made.received, made.version) == ("A", "0-1-14,1-1-3", 1)
    assert acknowledged.last(source, "A", current) == made
    assert acknowledged.last(source, "B", current) is None  # no record: no rule

    assert acknowledged.refusal("A", "B", made, "0-1-14,1-1-3") == ""
    assert acknowledged.refusal("A", "B", made, "0-1-15,1-1-4") == ""
    said = acknowledged.refusal("A", "B", made, "0-1-12")
    assert "B has received 0-1-12, less than A's replicas had received" in said
    assert "domain 0: the transactions after 0-1-12 up to 0-1-14" in said
    assert "domain 1: the transactions of the domain up to 1-1-3" in said

    # A later probe replaces it (one replica not read then: its record is lower).
    [later] = acknowledged.record(source, current.document, {"B": following("10.0.0.1:3306", "0-1-13")})  # fmt: skip
    assert acknowledged.last(source, "A", current) == later
    assert later.replicas == {"B": "0-1-13"}


def test_a_record_is_set_aside_once_a_map_names_its_host_master_of_nothing(
    source: ConfigSource,
) -> None:
    """A failover that lost writes lets the new master write the lost sequence numbers
    again: a record made before it would refuse a complete candidate later."""
    source.publish("shards", shard_map("A", "B"), author="ops", reason="test")
    first = source.current("shards")
    acknowledged.record(source, first.document, {"B": following("10.0.0.1:3306", "0-1-10")})
    source.publish("shards", shard_map("A", "C"), author="ops", reason="still A's")
    assert acknowledged.last(source, "A", source.current("shards")) is not None
    source.publish("shards", shard_map("B", "A"), author="ops", reason="failed over")
    assert acknowledged.last(source, "A", source.current("shards")) is None
    source.publish("shards", shard_map("A", "B"), author="ops", reason="failed back")
    assert acknowledged.last(source, "A", source.current("shards")) is None


def test_replicas_of_another_source_and_nothing_received_make_no_record(
    source: ConfigSource,
) -> None:
    source.publish("shards", shard_map("A", "B"), author="ops", reason="test")
    document = source.current("shards").document
    seen = {"B": following("10.0.0.9:3306", "0-1-10"), "C": following("10.0.0.1:3306", "")}
    assert acknowledged.record(source, document, seen) == []
    assert source.recorded(acknowledged.KIND, "A") is None
