"""The console's overview with its last hour drawn, in real Chromium: the site under
gunicorn serving its metrics, a Prometheus scraping them every second, and the overview
reading them back (screenshot ``console-overview-last-hour``)."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pinboard.ops.queries.trends import FIGURES, query_range
from tests.conftest import unavailable
from toolkit.processes import HOST, free_port
from toolkit.servers.prometheus import PrometheusServer
from toolkit.site_processes import GunicornSite

try:
    from playwright.sync_api import expect
except ImportError:  # the playwright fixture skips (or, under CI=true, fails) with the reason
    expect = None

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser


@pytest.fixture
def charted_site(
    site_env: dict[str, str], site_url: str, tmp_path: Path
) -> Iterator[tuple[str, str]]:
    """The browser tests' site under gunicorn, and a Prometheus scraping it: their URLs."""
    if not PrometheusServer.available():
        unavailable("Prometheus", PrometheusServer.available().reason)
    metrics = f"{HOST}:{free_port()}"
    (tmp_path / "metrics").mkdir()
    prometheus = PrometheusServer({"web": [metrics]}, interval="1s", home=tmp_path / "prometheus")
    prometheus.start()
    env = {
        **site_env,
        "PINBOARD_METRICS_BIND": metrics,
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "PINBOARD_PROMETHEUS_URL": prometheus.url,
    }
    site = GunicornSite(env, tmp_path / "gunicorn.log", workers=2, app="toolkit.site_wsgi")
    try:
        site.start().wait_ready()
        yield site.url("/"), prometheus.url
    finally:
        site.stop()
        prometheus.stop()


def test_the_overview_draws_the_last_hour(
    open_page: Callable[..., Page],
    shoot: Callable[[Page, str], Path],
    operator_password: str,
    charted_site: tuple[str, str],
) -> None:
    site, prometheus = charted_site
    deadline = time.monotonic() + 30
    while True:  # pages, until Prometheus has their rate
        for _ in range(5):
            with urllib.request.urlopen(site, timeout=10) as response:
                assert response.status == 200
        rate = query_range(prometheus, FIGURES[0].query, time.time() - 60, time.time())
        if rate and rate[0][1][-1][1] > 0:
            break
        assert time.monotonic() < deadline, "Prometheus did not scrape a rate in 30 s"
        time.sleep(1)

    page = open_page(base_url=site)
    page.goto("/ops/")
    page.get_by_label("Username").fill("operator")
    page.get_by_label("Password").fill(operator_password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="The last hour")).to_be_visible()
    requests = page.locator("figure.trend").filter(has_text="Requests per second")
    expect(requests.locator("svg.sparkline polyline")).to_have_count(1)
    expect(requests.locator(".trend-values")).to_contain_text("/s")
    shoot(page, "console-overview-last-hour")
