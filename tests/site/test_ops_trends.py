"""The overview's last hour, drawn from a real Prometheus that scrapes this process's metrics
(toolkit/servers/prometheus.py); and what it says when Prometheus does not answer."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client
from prometheus_client import start_http_server

from pinboard.ops.queries import trends
from tests.conftest import unavailable
from tests.site.conftest import PLANE
from tests.site.ops import config_dir_fixture, operator_fixture, staff_fixture, text  # noqa: F401
from toolkit.processes import HOST, free_port
from toolkit.servers.prometheus import PrometheusServer

pytestmark = pytest.mark.skipif(PLANE == "servers", reason="runs once, with the embedded plane")


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusServer]:
    """A Prometheus scraping this process's metrics every second."""
    if not PrometheusServer.available():
        unavailable("Prometheus", PrometheusServer.available().reason)
    port = free_port()
    server, thread = start_http_server(port, HOST)
    home = tmp_path_factory.mktemp("prometheus")
    prometheus = PrometheusServer({"site": [f"{HOST}:{port}"]}, interval="1s", home=home).start()
    try:
        yield prometheus
    finally:
        prometheus.stop()
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_overview_draws_the_last_hour_from_prometheus(
    staff: Client, prometheus: PrometheusServer, settings, make_user
) -> None:
    settings.PROMETHEUS_URL = prometheus.url
    pinner = make_user("charted")
    deadline = time.monotonic() + 30
    while True:  # requests, until Prometheus has scraped their rate
        for _ in range(5):
            assert staff.get(f"/{pinner['username']}/").status_code == 200
        rate = trends.query_range(
            prometheus.url, trends.FIGURES[0].query, time.time() - 60, time.time()
        )
        if rate and rate[0][1][-1][1] > 0:
            break
        assert time.monotonic() < deadline, "Prometheus did not scrape a rate in 30 s"
        time.sleep(1)
    page = text(staff.get("/ops/"))
    figure = re.search(r"<figcaption>Requests per second</figcaption>(.*?)</figure>", page, re.S)
    assert figure is not None
    assert re.search(r'<polyline class="line-1" points="[\d.]+,[\d.]+', figure.group(1))
    assert re.search(r"[1-9][\d.]*/s", figure.group(1))  # the latest rate, not zero
    assert "p99 time to serve a request" in page and "Fan-out lag, p99" in page
    # A figure with no series yet (no replica here) says so instead of a chart.
    lag = re.search(r"<figcaption>Replication lag</figcaption>(.*?)</figure>", page, re.S)
    assert lag is not None and "no data in the last hour" in lag.group(1)


def test_a_prometheus_that_does_not_answer_is_said_and_the_page_still_served(
    staff: Client, settings, tmp_path: Path
) -> None:
    settings.PROMETHEUS_URL = f"http://{HOST}:{free_port()}"
    started = time.monotonic()
    response = staff.get("/ops/")
    assert response.status_code == 200
    assert time.monotonic() - started < trends.TIMEOUT + 5  # asked at once, not one by one
    assert text(response).count("Prometheus did not answer") == len(trends.FIGURES)


def test_without_prometheus_the_overview_draws_no_charts(staff: Client, settings) -> None:
    settings.PROMETHEUS_URL = None
    assert "The last hour" not in text(staff.get("/ops/"))
