"""Prometheus metrics: what a request, a fan-out and the fleet's figures put into them.

In this process first (both planes), then through real gunicorn workers summed by their
master's ``/metrics`` (servers plane). The worker's side, with a real broker, is in
test_worker.py.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.test import Client

from pinboard import celery_app
from pinboard.boards.actions import create_board
from pinboard.follows.actions import follow_user
from pinboard.ops.fleet_metrics import FleetCollector
from pinboard.ops.models import JournalEntry
from pinboard.pins.actions import create_pin
from shardstore import metrics as store_metrics
from tests.site.conftest import PLANE, SiteServers, process_env
from tests.site.scrape import Samples, in_process, missing, scrape
from toolkit.images import image_upload
from toolkit.processes import HOST, ServerStartError, free_port
from toolkit.site_processes import GunicornSite

#: What a page view puts into the metrics of the process that serves it.
PAGE_FAMILIES = (
    "pinboard_http_requests_total",
    "pinboard_http_request_duration_seconds_count",
    "shardstore_sql_duration_seconds_count",
    "shardstore_cache_calls_total",
    "shardstore_cache_lookups_total",
    "shardstore_cache_fills_total",
    "shardstore_read_together_reads_count",
    "shardstore_redis_calls_total",
)
#: What a process that follows its config notes of it (the tests' own plane follows none).
CONFIG_FAMILIES = (
    "shardstore_config_version",
    "shardstore_config_loaded_timestamp_seconds",
    "shardstore_config_source_contact_timestamp_seconds",
)


def test_a_page_and_a_fan_out_are_counted_by_route_host_pool_and_task(
    client: Client, make_user
) -> None:
    owner, fan = make_user("owner"), make_user("fan")
    follow_user(fan["id"], owner["id"])
    board = create_board(owner["id"], "Counted")
    before = in_process()
    create_pin(owner["id"], board["id"], image_upload(), "Counted pin")  # fan-out: eager here
    assert client.get(f"/{owner['username']}/").status_code == 200
    assert client.get("/no/such/page/at/all/").status_code == 404
    after = in_process()

    assert not missing(after, PAGE_FAMILIES)
    assert _grew(before, after, "pinboard_http_requests_total", route="profile", status="200")
    assert _grew(before, after, "pinboard_http_requests_total", route="unmatched", status="404")
    sql = "shardstore_sql_duration_seconds_count"
    assert any(_grew(before, after, sql, host=host, kind="object") for host in _hosts())
    assert _grew(before, after, "shardstore_sql_duration_seconds_count", kind="write")
    assert _grew(before, after, "shardstore_cache_lookups_total", pool="users")
    assert _grew(before, after, "pinboard_task_duration_seconds_count",
                 task="pinboard.feeds.tasks.fan_out_batch", state="SUCCESS")  # fmt: skip
    assert _grew(before, after, "pinboard_fanout_lag_seconds_count")


def test_a_made_up_method_adds_no_label_value(client: Client) -> None:
    before = in_process()
    for method in ("BREW", "PROPFIND", "XYZZY1"):
        client.generic(method, "/")
    after = in_process()
    assert _grew(before, after, "pinboard_http_requests_total", method="other")
    methods = after.label_values("pinboard_http_requests_total", "method")
    assert methods <= {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"}


def test_a_statement_is_classed_by_the_kind_of_table_it_reads() -> None:
    meter = store_metrics.SqlMeter({"pins": "object", "board_has_pins": "mapping"})
    assert (
        meter.kind_of("SELECT local_id, data FROM db00042.pins WHERE local_id IN (1)") == "object"
    )
    assert meter.kind_of("  select to_id from `db00001`.`board_has_pins` where 1") == "mapping"
    assert meter.kind_of("SELECT 1") == "other"
    assert meter.kind_of("INSERT INTO db00042.pins (local_id, data) VALUES (1, '{}')") == "write"
    assert meter.kind_of("COMMIT") == "write"


def test_a_slow_statement_is_logged_with_its_host_and_shard(caplog) -> None:
    meter = store_metrics.SqlMeter({})
    with caplog.at_level("WARNING", logger="shardstore.sql"):
        meter.observe("MySQL001A", 42, "SELECT 1", store_metrics.SLOW_SQL_SECONDS / 2)
        meter.observe("MySQL001A", 42, "SELECT 2", store_metrics.SLOW_SQL_SECONDS * 2)
    [record] = caplog.records
    assert (record.host, record.shard) == ("MySQL001A", 42)  # type: ignore[attr-defined]
    assert "SELECT 2" in record.getMessage()


def test_the_fleet_collector_reads_queues_hosts_and_open_operations() -> None:
    JournalEntry.objects.create(operation="split", summary="split 0..15", operator="ops")
    JournalEntry.objects.create(operation="split", summary="a plan", operator="ops", dry_run=True)
    JournalEntry.objects.create(operation="failover", summary="done", operator="ops", ok=True)
    fleet = _collected(FleetCollector(celery_app))
    assert fleet.label_values("pinboard_queue_depth", "queue") == {"celery", "jobs"}
    assert fleet.total("pinboard_open_operations", operation="split") == 1  # not the dry run
    assert fleet.label_values("pinboard_open_operations", "operation") == {"split"}
    assert fleet.total("pinboard_open_operation_age_seconds", operation="split") >= 0
    assert fleet.label_values("pinboard_mysql_up", "host") == _hosts()
    assert fleet.total("pinboard_mysql_up") == len(_hosts())  # every host answers
    if PLANE == "servers":  # one MariaDB, no replica: a pair, and not a healthy one
        assert fleet.label_values("pinboard_mysql_pair_healthy", "master") == _hosts()
        assert fleet.total("pinboard_mysql_pair_healthy") == 0


def _collected(collector: FleetCollector) -> Samples:
    samples = Samples()
    for family in collector.collect():
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def _hosts() -> set[str]:
    from pinboard.data_plane import cached_store

    return set(cached_store().topology.hosts)


def _grew(before: Samples, after: Samples, name: str, **labels: str) -> bool:
    return after.total(name, **labels) > before.total(name, **labels)


# -- through gunicorn: two workers, one /metrics ----------------------------------------


@pytest.fixture
def site(tmp_path: Path, site_servers: SiteServers, data_plane):
    if PLANE != "servers":
        pytest.skip("the servers plane: gunicorn's workers share the shards with this process")
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "counter_0.db").write_bytes(b"")  # an earlier run's: cleared
    port = free_port()
    env = process_env(
        tmp_path,
        site_servers,
        PINBOARD_METRICS_BIND=f"{HOST}:{port}",
        PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "metrics"),
    )
    process = GunicornSite(env, tmp_path / "gunicorn.log", workers=2, threads=2).start()
    try:
        process.wait_ready()
        assert not (tmp_path / "metrics" / "counter_0.db").exists()  # not summed with ours
        yield process, f"http://{HOST}:{port}/metrics"
    finally:
        process.stop()


def test_gunicorns_master_serves_every_workers_requests_on_its_own_port(site, make_user) -> None:
    process, metrics_url = site
    owner = make_user("served")
    for _ in range(12):  # spread over both workers by the kernel
        with urllib.request.urlopen(process.url(f"/{owner['username']}/"), timeout=10) as page:
            assert page.status == 200
    samples = scrape(metrics_url)
    assert samples.total("pinboard_http_requests_total", route="profile") == 12
    assert not missing(samples, PAGE_FAMILIES + CONFIG_FAMILIES)
    assert samples.total("shardstore_config_version", document="shards") >= 1  # each pid's
    # The site's own port has no /metrics: what it serves goes to the internet.
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(process.url("/metrics"), timeout=10)
    refused.value.close()
    assert refused.value.code == 404


def test_a_metrics_bind_without_a_directory_is_refused_at_start(tmp_path: Path) -> None:
    env = {**os.environ, "PINBOARD_METRICS_BIND": f"{HOST}:{free_port()}"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    process = GunicornSite(env, tmp_path / "gunicorn.log", workers=1).start()
    try:
        with pytest.raises(ServerStartError, match="needs PROMETHEUS_MULTIPROC_DIR"):
            process.wait_ready()
    finally:
        process.stop()
