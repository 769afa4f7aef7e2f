"""The drills' load (toolkit/load/) against the real site under gunicorn, on SQLite shards
followed from a config directory: every acknowledged write is found again, a write lost
behind its back is counted, and writes the site refuses (503 + Retry-After while the
shards are read-only) are counted as refused and retried until they land."""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pinboard.catalog import CATALOG
from shardstore import Store, Topology, init_shards
from shardstore.control.file_source import FileSource
from tests.config_documents import eventually, sqlite_shard_map
from toolkit.load.api import Site
from toolkit.load.pinners import ensure_pinners
from toolkit.load.report import longest_gap
from toolkit.load.traffic import Load
from toolkit.site_processes import GunicornSite


@dataclass
class Deployment:
    site: Site
    gunicorn: GunicornSite
    source: FileSource
    store: Store
    shards: dict[str, Any]

    def topology(self) -> Topology:
        return Topology.from_json(self.source.current("shards").document)

    def publish(self, document: dict[str, Any]) -> int:
        """Publish a shard map; returns once the site serves it."""
        version = self.source.publish("shards", document, author="test", reason="test").version
        assert eventually(lambda: self.served() == version, timeout=30), "the site did not follow"
        return version

    def served(self) -> int:
        with urllib.request.urlopen(self.gunicorn.url("/readyz"), timeout=5) as response:
            version: int = json.loads(response.read())["config"].get("shards", 0)
            return version


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    shards = sqlite_shard_map(tmp_path / "shards")
    store = Store(Topology.from_json({**shards, "version": 1}), catalog=CATALOG)
    init_shards(store)
    source = FileSource(tmp_path / "config")
    source.publish("shards", shards, author="test", reason="first")
    own = {k: v for k, v in os.environ.items() if not k.startswith(("PINBOARD_", "DJANGO_"))}
    env = {
        **own,
        "DJANGO_SETTINGS_MODULE": "pinboard.settings.dev",
        "PINBOARD_VAR_DIR": str(tmp_path / "var"),
        "PINBOARD_TOPOLOGY": str(tmp_path / "config"),
        "PINBOARD_ALLOWED_HOSTS": "127.0.0.1",
    }
    gunicorn = GunicornSite(env, tmp_path / "gunicorn.log", workers=1).start()
    site = Site(gunicorn.url(""))
    try:
        gunicorn.wait_ready()
        yield Deployment(site, gunicorn, source, store, shards)
    finally:
        site.close()
        gunicorn.stop()
        store.close()
        source.close()


def test_every_acknowledged_write_is_found_and_a_lost_one_is_counted(
    deployment: Deployment, tmp_path: Path
) -> None:
    topology = deployment.topology()
    pinners = ensure_pinners(deployment.site, tmp_path / "pinners.json", topology, per_group=2)
    assert len(pinners) == 2 and {p.pin_id for p in pinners} == set(
        deployment.store.mapping("user_has_pins").page(pinners[0].user_id).ids
        + deployment.store.mapping("user_has_pins").page(pinners[1].user_id).ids
    )
    load = Load(deployment.site, pinners, topology, writers_per_group=2, readers=1).start()
    assert eventually(lambda: load.acked_since(0, "db1") >= 20, timeout=60)
    load.stop()

    report = load.verify(deployment.store)
    tally = report.groups["db1"].tally
    assert report.acked == len(load.acks) >= 20
    assert report.lost == 0
    assert (tally.refused, tally.failed, tally.reads_refused, tally.reads_failed) == (0, 0, 0, 0)
    assert tally.reads > 0
    assert len({a.comment_id for a in load.acks}) == len(load.acks)

    # A comment gone behind the load's back, and one no longer listed under its pin.
    first, second = load.acks[0], load.acks[1]
    deployment.store.objects("comment").delete(first.comment_id, hard=True)
    deployment.store.mapping("pin_has_comments").remove(second.pin_id, second.comment_id)
    assert load.verify(deployment.store).lost == 2

    # The pinners are kept: a second load signs nobody up.
    assert ensure_pinners(deployment.site, tmp_path / "pinners.json", topology, per_group=2) == pinners  # fmt: skip


def test_refused_writes_are_counted_and_retried_until_they_land(
    deployment: Deployment, tmp_path: Path
) -> None:
    topology = deployment.topology()
    pinners = ensure_pinners(deployment.site, tmp_path / "pinners.json", topology, per_group=2)
    deployment.publish({**deployment.shards, "read_only": [[0, 15]]})
    load = Load(deployment.site, pinners, topology, writers_per_group=2, readers=1).start()
    try:
        assert eventually(lambda: load.tallies["db1"].refused >= 4, timeout=30)
        assert load.acked_since(0, "db1") == 0  # nothing lands on read-only shards
        deployment.publish(deployment.shards)  # writable again
        assert eventually(lambda: load.acked_since(0, "db1") >= 10, timeout=60)
    finally:
        load.stop()

    report = load.verify(deployment.store)
    tally = report.groups["db1"].tally
    assert report.lost == 0 and report.acked == len(load.acks)
    assert tally.refused >= 4 and tally.failed == 0
    assert set(tally.statuses) == {503}  # each with Retry-After: the writer waited, then retried
    assert tally.reads > 0 and tally.reads_refused == tally.reads_failed == 0  # reads go on


def test_longest_gap_counts_the_edges() -> None:
    assert longest_gap([2.0, 3.0, 7.0], 0.0, 8.0) == (4.0, 3.0)
    assert longest_gap([1.0, 2.0], 0.0, 10.0) == (8.0, 2.0)  # never answered again
    assert longest_gap([], 5.0, 6.0) == (1.0, 5.0)
    assert longest_gap([9.0, 1.0], 0.0, 3.0) == (2.0, 1.0)  # times past the end are not counted
