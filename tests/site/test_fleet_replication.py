"""The fleet metrics' replication figures on real MariaDB: every stream a host runs, its
named ones included (a split's reverse stream), a master's commits waiting for an
acknowledgement, and a master of the map that is read-only."""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

from django.conf import settings
from django.test import override_settings

from pinboard.ops.fleet_metrics import host_metrics
from pinboard.ops.queries.probes import probe
from shardstore.control import reverse_stream
from tests.shardstore.replication import root, start_servers
from tests.site.scrape import Samples


def figures(document: dict[str, Any]) -> Samples:
    with override_settings(SHARDSTORE={**settings.SHARDSTORE, "MYSQL_ADMIN": "root:"}):
        probes = {name: probe(address) for name, address in document["hosts"].items()}
    samples = Samples()
    for family in host_metrics(document, probes):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(seen: Samples, name: str, **labels: str) -> float:
    """The one sample of ``name`` with these labels (absent or several: a failure)."""
    found = [v for (n, got), v in seen.items() if n == name and set(labels.items()) <= got]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def test_every_stream_the_semi_sync_waits_and_a_read_only_master_are_exported() -> None:
    a, b, c = start_servers(3)  # read-only, as every shard host starts
    try:
        document = {
            "hosts": {"A": f"mysql://{a.address}", "B": f"mysql://{b.address}"},
            "ranges": [{"range": [0, 1], "master": "A"}, {"range": [2, 3], "master": "B"}],
        }
        with root(document["hosts"]["B"]) as new:
            new.arm_semi_sync()
            new.set_read_only(False)
            new.query("CREATE DATABASE db00002")
            new.query("CREATE TABLE db00002.t (n INT)")
            with root(document["hosts"]["A"]) as old:
                reverse_stream.start(old, new, 9, [2, 3])  # A follows B by a named stream
        stream = {"host": "A", "source": b.address, "connection": "revert_split9"}
        seen = figures(document)
        assert value(seen, "pinboard_mysql_replication_running", **stream) == 1
        assert value(seen, "pinboard_mysql_replication_lag_seconds", **stream) == 0
        assert value(seen, "pinboard_mysql_stream_healthy", host="A", source="B") == 1
        assert seen.label_values("pinboard_mysql_replication_running", "connection") == {
            "revert_split9"
        }  # A's default connection is idle: only the named one
        assert value(seen, "pinboard_mysql_master_read_only", host="A") == 1  # never opened
        assert value(seen, "pinboard_mysql_master_read_only", host="B") == 0
        assert value(seen, "pinboard_mysql_semi_sync_wait_sessions", host="B") == 0

        with root(f"mysql://{c.address}") as replica, root(document["hosts"]["B"]) as new:
            replica.replicate_from(new)  # C acknowledges B's commits; A's stream does not
        os.kill(c.pid, signal.SIGSTOP)  # B's replica stalls: B's commit waits for it
        try:

            def write() -> None:
                with root(document["hosts"]["B"]) as new:
                    new.query("INSERT INTO db00002.t VALUES (1)")

            writer = threading.Thread(target=write, daemon=True)
            writer.start()
            writer.join(2.0)
            assert writer.is_alive()
            stalled = figures(document)
            assert value(stalled, "pinboard_mysql_semi_sync_wait_sessions", host="B") == 1
        finally:
            os.kill(c.pid, signal.SIGCONT)
        writer.join(30)
        assert not writer.is_alive()
        assert value(figures(document), "pinboard_mysql_semi_sync_acknowledged", host="B") >= 1

        with root(document["hosts"]["A"]) as old:
            old.query("STOP SLAVE 'revert_split9' SQL_THREAD")
        broken = figures(document)
        assert value(broken, "pinboard_mysql_replication_running", **stream) == 0
        assert value(broken, "pinboard_mysql_stream_healthy", host="A", source="B") == 0
    finally:
        for server in (c, b, a):
            server.stop()
