"""``manage.py start_replica HOST`` on real MariaDB: a restarted replica (its threads stopped,
``skip_slave_start``) is started again, the relay log it kept applied first, once its
master answers; with its master down it is left as it is."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from shardstore.control import documents
from shardstore.control.file_source import FileSource
from tests.config_documents import eventually
from tests.shardstore.replication import kill_master, root, start_servers


def start_replica(host: str) -> str:
    out = io.StringIO()
    call_command("start_replica", host, stdout=out)
    return out.getvalue()


def test_a_restarted_replica_is_started_with_its_relay_log_applied_first(
    tmp_path: Path, settings: Any
) -> None:
    master, replica = start_servers(2)
    try:
        with root(f"mysql://{master.address}") as m, root(f"mysql://{replica.address}") as r:
            m.set_semi_sync(True)
            m.set_read_only(False)
            r.replicate_from(m)
            m.query("CREATE DATABASE db00000")
            m.query("CREATE TABLE db00000.t (n INT PRIMARY KEY)")
            assert r.wait_for(m.gtid_binlog_pos(), 30)
            r.query("STOP SLAVE SQL_THREAD")
            m.query("INSERT INTO db00000.t VALUES (1), (2)")  # acknowledged, not applied
        source = FileSource(tmp_path / "config")
        document = {
            "version": 0,
            "shard_count": 1,
            "hosts": {"A": f"mysql://{master.address}", "B": f"mysql://{replica.address}"},
            "ranges": [{"range": [0, 0], "master": "A", "replica": "B"}],
            "open": [[0, 0]],
            "lookup_shards": 1,
        }
        source.publish(documents.SHARDS, document, author="test", reason="a pair")
        settings.SHARDSTORE = {
            **settings.SHARDSTORE,
            "CONFIG": str(tmp_path / "config"),
            "MYSQL_ADMIN": "root:",
        }
        replica.halt()
        replica.restart()

        with pytest.raises(CommandError, match="the replica of nothing"):
            start_replica("A")
        said = start_replica("B")
        assert "B (restarted at" in said and "applied its kept relay log" in said
        with root(f"mysql://{replica.address}") as r:  # its I/O thread connects meanwhile
            assert eventually(lambda: (s := r.replica_status()) is not None and s.healthy, 10)
            assert r.value("SELECT COUNT(*) FROM db00000.t") == 2
        assert "not at risk" in start_replica("B")

        replica.halt()
        replica.restart()
        kill_master(master, replica)
        with pytest.raises(CommandError, match="A, B's master, gives no answer"):
            start_replica("B")
        with root(f"mysql://{replica.address}") as r:  # left as it was
            status = r.replica_status()
            assert status is not None and not status.io_running and not status.sql_running
    finally:
        replica.stop()
        master.stop()
