"""The backups' metrics and the console's Backups page, as their records in the config
source say: each range's newest backup (its age and size), each master's binary-log
archive lag (a former master's left out of the metrics: its archive is finished), and each
range's last verification; the page marks what an alert would fire on. The console's
*Back up now* asks for a backup, shown pending until one is taken."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.test import Client

from pinboard.data_plane import plane
from pinboard.ops.console_actions import ACTIONS
from pinboard.ops.fleet_metrics import backups
from pinboard.ops.models import JournalEntry
from pinboard.ops.roles import DESTRUCTIVE
from shardstore.backups.manifest import Manifest
from shardstore.control import backup_records
from shardstore.control.file_source import FileSource
from shardstore.replicas import with_replicas
from tests.site.ops import (  # noqa: F401
    config_dir_fixture,
    operator_fixture,
    shards_document,
    staff_fixture,
    text,
)
from tests.site.test_ops_actions import confirm, plan


def test_the_backup_metrics_say_each_ranges_backup_its_masters_archive_and_verification(
    config_dir: Path,
) -> None:
    source = FileSource(config_dir)
    now = time.time()
    master = plane().store.store.topology.ranges[0].master
    made = Manifest("20261129T000000Z", "B", "0-1023, 1024-2047", "0-1-9", now - 4000, now - 3600, 12345, "mariadb-backup")  # fmt: skip
    backup_records.taken(source, made)
    backup_records.archived(source, {master: now - 30, "gone": now - 9999})
    backup_records.verified(source, "0-1023", {"ok": False, "at": now - 60, "backup": "B/x", "said": "differs", "seconds": 1.0})  # fmt: skip
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in backups()
        for sample in family.samples
    }
    for span in ("0-1023", "1024-2047"):
        assert 3600 <= samples[("pinboard_backup_age_seconds", (("range", span),))] < 3700
        assert samples[("pinboard_backup_bytes", (("range", span),))] == 12345
    lags = {k: v for k, v in samples.items() if k[0] == "pinboard_binlog_archive_lag_seconds"}
    assert list(lags) == [("pinboard_binlog_archive_lag_seconds", (("host", master),))]
    assert 30 <= next(iter(lags.values())) < 60
    assert samples[("pinboard_backup_verified", (("range", "0-1023"),))] == 0
    assert 60 <= samples[("pinboard_backup_verified_age_seconds", (("range", "0-1023"),))] < 90


def test_the_backups_page_shows_each_range_and_marks_what_an_alert_would_fire_on(
    staff: Client, config_dir: Path
) -> None:
    topology = plane().store.store.topology
    first, *rest = topology.ranges
    span = f"{first.first}-{first.last}"
    page = text(staff.get("/ops/backups/"))
    assert page.count("never caught up") == len(topology.ranges)  # nothing recorded yet
    source = FileSource(config_dir)
    now = time.time()
    made = Manifest("20261129T000000Z", "B", span, "0-1-9", now - 200000, now - 120000, 5 << 20, "mariadb-backup")  # fmt: skip
    backup_records.taken(source, made)
    backup_records.archived(source, {first.master: now - 10})
    backup_records.verified(source, span, {"ok": False, "at": now, "backup": "B/x", "said": "the copy differs: db00001.pins", "seconds": 1.0})  # fmt: skip
    page = text(staff.get("/ops/backups/"))
    assert "<code>B/20261129T000000Z</code>" in page
    assert '<td class="num bad">120000 s</td>' in page  # older than BackupTooOld's 30 h
    assert "5.0\xa0MB" in page or "5.0 MB" in page
    assert '<span class="bad">failed</span>: the copy differs: db00001.pins' in page
    assert page.count("never caught up") == len(rest)  # its master's archive caught up 10 s ago


def test_restore_shard_is_a_destructive_console_action_refused_before_anything_on_bad_input(
    staff: Client, config_dir: Path, settings: Any, tmp_path: Path
) -> None:
    assert "restore-shard" in ACTIONS and "restore-shard" in DESTRUCTIVE
    form = {"shard": 1, "to": "2026-11-29T08:30:00Z", "into": "nohost"}
    assert "nohost is not a MySQL host of the shard map" in plan(staff, "restore-shard", form, status=400)  # fmt: skip
    for bad in ("yesterday", "0-1-42"):
        assert "a time" in plan(staff, "restore-shard", {**form, "to": bad}, status=400)
    assert not JournalEntry.objects.exists()


def test_restore_shard_is_planned_where_the_backups_cannot_be_read_and_checked_where_it_runs(
    staff: Client, config_dir: Path, settings: Any, tmp_path: Path
) -> None:
    """A web host is not told of the store: the plan names the range's newest backup by the
    time without reading it, and the worker that runs it finds it (here: none, refused
    before anything changed)."""
    document = shards_document(config_dir)
    # MySQL hosts, never reached: the run stops before it connects to any.
    hosts = {name: f"mysql://127.0.0.1:{9 + n}" for n, name in enumerate([*document["hosts"], "spare-x"])}  # fmt: skip
    FileSource(config_dir).publish("shards", {**document, "hosts": hosts}, author="t", reason="a spare")  # fmt: skip
    spare = "spare-x"
    first = document["ranges"][0]
    settings.SHARDSTORE = {**settings.SHARDSTORE, "BACKUP_STORE": None}
    form = {"shard": first["range"][0], "to": "2026-11-29T08:30:00Z", "into": spare}
    page = plan(staff, "restore-shard", form)
    assert f"restore range {first['range'][0]}-{first['range'][1]}&#x27;s newest backup by 2026-11-29 08:30:00Z (found as this runs)" in page  # fmt: skip
    settings.SHARDSTORE = {**settings.SHARDSTORE, "BACKUP_STORE": f"file://{tmp_path / 'backups'}"}
    response = confirm(staff, "restore-shard", page)  # the same plan, run by the worker
    assert response.status_code == 302
    run = JournalEntry.objects.get(dry_run=False)
    assert not run.ok and f"has no backup of range {first['range'][0]}-{first['range'][1]}" in run.result  # fmt: skip
    assert [note for _, _, note in run.steps] == [
        "no scratch server was made"
    ]  # step 1's undo alone


def test_back_up_now_asks_the_range_s_replica_for_a_backup_and_the_page_shows_it_pending(
    staff: Client, config_dir: Path
) -> None:
    assert "backup-now" in ACTIONS and "backup-now" in DESTRUCTIVE
    source = FileSource(config_dir)
    document = shards_document(config_dir)
    first, *rest = document["ranges"]
    span = f"{first['range'][0]}-{first['range'][1]}"
    alone = with_replicas(first, [])
    FileSource(config_dir).publish("shards", {**document, "ranges": [alone, *rest]}, author="t", reason="no replica")  # fmt: skip
    form = {"first": first["range"][0], "last": first["range"][1]}
    assert f"range {span} has no replica in service" in plan(staff, "backup-now", form, status=400)
    assert "no range 0-0 in the shard map" in plan(staff, "backup-now", {"first": 0, "last": 0}, status=400)  # fmt: skip

    document = shards_document(config_dir)
    hosts = {**document["hosts"], "replica-b": document["hosts"][first["master"]]}
    ranges = [with_replicas(first, ["replica-b"]), *rest]
    source.publish("shards", {**document, "hosts": hosts, "ranges": ranges}, author="t", reason="a replica")  # fmt: skip
    page = plan(staff, "backup-now", form)
    assert f"ask for a backup of range {span} (from one of replica-b)" in page
    assert backup_records.status(source).requested == {}  # a plan changes nothing
    response = confirm(staff, "backup-now", page)
    assert response.status_code == 302
    asked = backup_records.status(source).requested[span]
    assert asked["by"] == "ops_ada" and time.time() - asked["at"] < 60
    assert backup_records.status(source).due(span, 86400, time.time()) == "it has no backup"
    page = text(staff.get("/ops/backups/"))
    assert "asked for by ops_ada, to be taken" in page

    made = Manifest("20261129T000000Z", "replica-b", span, "0-1-9", time.time(), time.time(), 1, "mariadb-backup")  # fmt: skip
    backup_records.taken(source, made)  # its timer took it
    assert backup_records.status(source).due(span, 86400, time.time()) is None
    assert "asked for by" not in text(staff.get("/ops/backups/"))
