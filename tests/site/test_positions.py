"""The fleet probe records what each master's replicas had received (pinboard/ops/positions.py),
from the hosts it probed, on real MariaDB: the position an emergency failover holds its
candidate to (shardstore/control/acknowledged.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings

from pinboard.ops import positions
from pinboard.ops.queries.probes import probe
from shardstore import Topology
from shardstore.control import acknowledged
from shardstore.control.file_source import FileSource
from tests.shardstore.replication import root, start_servers


def test_the_probe_records_the_highest_position_the_replicas_received(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    master, replica = start_servers(2)
    try:
        with root(f"mysql://{master.address}") as m, root(f"mysql://{replica.address}") as r:
            m.set_read_only(False)
            r.replicate_from(m)
            m.query("CREATE DATABASE db00000")
            r.query("STOP SLAVE SQL_THREAD")  # received, not applied: still recorded
            m.query("CREATE TABLE db00000.t (n INT)")
            sent = m.gtid_binlog_pos()
            deadline = time.monotonic() + 30
            while (status := r.replica_status()) is None or status.received != sent:
                assert time.monotonic() < deadline, status
                time.sleep(0.05)
        topology = Topology.from_json(
            {
                "version": 4,
                "shard_count": 1,
                "hosts": {"A": f"mysql://{master.address}", "B": f"mysql://{replica.address}"},
                "ranges": [{"range": [0, 0], "master": "A", "replica": "B"}],
                "open": [[0, 0]],
                "lookup_shards": 1,
            }
        )
        with override_settings(SHARDSTORE={**settings.SHARDSTORE, "MYSQL_ADMIN": "root:"}):
            probes = {name: probe(address) for name, address in topology.hosts.items()}
        source = FileSource(tmp_path / "config")
        monkeypatch.setattr(positions, "_source", source)
        positions.record(topology, probes)
    finally:
        replica.stop()
        master.stop()
    data = source.recorded(acknowledged.KIND, "A")
    assert data is not None
    made = acknowledged.Record.from_json(data)
    assert (made.received, made.replicas, made.version) == (sent, {"B": sent}, 4)
    assert source.recorded(acknowledged.KIND, "B") is None  # B masters nothing
