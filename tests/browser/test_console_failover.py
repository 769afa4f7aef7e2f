"""A planned failover from the console, in real Chromium, on a real MariaDB pair: the
operator plans it, reads the steps, confirms, reads the journal entry, and the overview
shows the replica as the new master."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from shardstore.control.file_source import FileSource
from tests.shardstore.replication import (  # noqa: F401 - pair: a fixture
    APP,
    REPLICATION,
    pair,
    publish_pair,
)
from toolkit.servers.mariadb import MariaDBServer
from toolkit.site_processes import manage

from .conftest import serve

try:
    from playwright.sync_api import expect
except ImportError:  # the playwright fixture skips (or, under CI=true, fails) with the reason
    expect = None

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

pytestmark = pytest.mark.browser


@pytest.fixture
def pair_site(
    pair: tuple[MariaDBServer, MariaDBServer],  # noqa: F811 - the fixture imported above
    tmp_path: Path,
) -> Iterator[tuple[str, str]]:
    """A site whose 16 shards live on the pair (A master, B replica): its URL and the
    operator's password."""
    master, replica = pair
    source = FileSource(tmp_path / "config")
    publish_pair(source, master, replica, shards=16)
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("PINBOARD_")}
    env = {
        **inherited,
        "DJANGO_SETTINGS_MODULE": "tests.browser.settings",
        "PINBOARD_VAR_DIR": str(tmp_path / "var"),
        "PINBOARD_TOPOLOGY": str(tmp_path / "config"),
        "PINBOARD_MYSQL_LOGIN": APP,
        "PINBOARD_MYSQL_ADMIN": "root:",
        "PINBOARD_MYSQL_REPLICATION": REPLICATION,
        "PINBOARD_ALLOWED_HOSTS": "127.0.0.1",
        "PYTHONUNBUFFERED": "1",
    }
    manage(env, "migrate", "--verbosity", "0")
    manage(env, "shardstore", "init")
    found = re.search(r"password: (\S+)", manage(env, "ensure_operator"))
    assert found is not None
    with serve(env, "browser-failover-server.log") as url:
        yield url, found.group(1)


def test_an_operator_fails_a_master_over_from_the_console(
    browser: Browser,
    pair_site: tuple[str, str],
    shoot: Callable[[Page, str], Path],
    problems: dict[BrowserContext, list[str]],
) -> None:
    url, password = pair_site
    context = browser.new_context(base_url=url, viewport={"width": 1280, "height": 800})
    context.set_default_timeout(20_000)
    errors = problems[context] = []  # shoot() fails on any error seen
    context.on(
        "response", lambda r: errors.append(f"HTTP {r.status} {r.url}") if r.status >= 500 else None
    )
    page = context.new_page()
    try:
        page.goto("/ops/")
        page.get_by_label("Username").fill("operator")
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("heading", name="Overview")).to_be_visible()

        page.goto("/ops/actions/failover/")
        page.get_by_label("Host").fill("A")
        page.get_by_role("button", name="Show the plan").click()
        expect(
            page.get_by_role("heading", name=re.compile("Plan: fail over A to B"))
        ).to_be_visible()
        plan = page.locator("ol.plan")
        for step in (
            "check B replicates from A and is caught up",
            "set read_only on A",
            "publish shard map v2: shards 0..15 mastered by B",
            "make A replicate from B",
        ):
            expect(plan).to_contain_text(step)
        shoot(page, "console-failover-plan")

        page.get_by_role("button", name="Run it").click()
        expect(page).to_have_url(re.compile(r"/ops/journal/\d+/$"))
        expect(page.get_by_role("status")).to_contain_text("Done: fail over A to B")
        expect(page.locator("table.data")).to_contain_text("shard map version 2 published")
        shoot(page, "console-failover-journal")

        page.goto("/ops/")
        expect(page.get_by_text("Shard map v2")).to_be_visible()
        row = page.get_by_role("table", name="MySQL hosts").locator("tbody tr")
        expect(row.filter(has=page.get_by_role("link", name="B", exact=True))).to_contain_text(
            "master 0..15"
        )
        a_row = row.filter(has=page.get_by_role("link", name="A", exact=True))
        expect(a_row).to_contain_text("replica of 0..15")
        expect(a_row).to_contain_text("Yes")  # it replicates from B, as the probe sees
        pairs = page.get_by_role("table", name="Pairs").locator("tbody tr")
        expect(pairs).to_have_count(1)
        expect(pairs).to_contain_text("yes")  # B's commits wait for A: backed up
        shoot(page, "console-failover-overview")
        assert errors == []
    finally:
        context.close()
        del problems[context]
