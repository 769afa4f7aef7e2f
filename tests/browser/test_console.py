"""The operators' console in real Chromium: a pinner is refused, an operator logs in with the
account ``make run`` prints, visits every console page, plans an action (a dry run), runs it
and reads its journal entry. Every page is screenshot (``console-*``) and must load with no
error, blocked script or style (the Content-Security-Policy applies to the console too)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the playwright fixture skips (or, under CI=true, fails) with the reason
    expect = None

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

Shoot = Callable[["Page", str], Path]


def test_a_pinner_is_refused(open_page: Callable[[], Page], shoot: Shoot) -> None:
    page = open_page()
    page.goto("/signup/")
    page.get_by_label("Username").fill("console_pinner")
    page.get_by_label("Email").fill("console_pinner@example.com")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", name="Hello, console_pinner")).to_be_visible()
    for path in ("/ops/", "/ops/actions/close-range/", "/admin/"):
        response = page.goto(path)
        assert response is not None and response.status == 403, path
        expect(page.get_by_role("heading", name="Operators only")).to_be_visible()
    shoot(page, "console-pinner-refused")


def test_an_operator_plans_runs_and_reads_the_journal(
    open_page: Callable[[], Page], shoot: Shoot, operator_password: str
) -> None:
    page = open_page()

    # Anonymous: the console sends the visitor to the staff log-in, then back.
    page.goto("/ops/")
    expect(page).to_have_url(re.compile(r"/admin/login/\?next=/ops/$"))
    page.get_by_label("Username").fill("operator")
    page.get_by_label("Password").fill(operator_password)
    shoot(page, "console-staff-login")
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/ops/$"))

    # The overview: the host, its health, the chart.
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    expect(page.get_by_role("link", name="db1")).to_be_visible()
    expect(page.locator("svg.chart rect.shards").first).to_be_visible()
    expect(page.get_by_text("follows").first).to_be_visible()
    shoot(page, "console-overview")
    page.get_by_role("link", name="db1").click()
    expect(page.get_by_role("heading", name="Host db1")).to_be_visible()
    expect(page.locator("table.data tbody tr")).to_have_count(1 + 16)  # the host, 16 shards
    shoot(page, "console-host")

    nav = page.get_by_role("navigation", name="Console")
    nav.get_by_role("link", name="ID decoder").click()
    page.get_by_label("ID, username or URL").fill("241294492511762325")
    page.get_by_role("button", name="Decode").click()
    expect(page.locator(".facts")).to_contain_text("3429")  # the seeds' example: shard 3429
    expect(page.get_by_role("alert")).to_contain_text("is in no range")  # 16 shards here
    shoot(page, "console-decoder")

    for link, shows, step in (
        ("Topology", "In force: shards v1", "console-topology"),
        ("Cache pools", "Local memory: each process keeps its own copy", "console-caches"),
        ("Celery", "Eager (no broker)", "console-celery"),
        ("Journal", "Every operation, newest first", "console-journal-empty"),
        ("Actions", "Open a new shard range", "console-actions"),
    ):
        nav.get_by_role("link", name=link).click()
        expect(page.get_by_role("heading", name=link, exact=True)).to_be_visible()
        expect(page.get_by_text(shows).first).to_be_visible()
        shoot(page, step)

    # An action: its form, then the dry-run plan (nothing changed yet).
    page.get_by_role("link", name="Close a range to new users").click()
    page.get_by_label("First").fill("0")
    page.get_by_label("Last").fill("3")
    shoot(page, "console-action-form")
    page.get_by_role("button", name="Show the plan").click()
    expect(page.get_by_role("heading", name=re.compile("Plan: close shards 0..3"))).to_be_visible()
    expect(page.locator("ol.plan")).to_contain_text("publish shard map v2: open [[4, 15]]")
    expect(page.get_by_text("Journaled as a dry run")).to_be_visible()
    shoot(page, "console-action-plan")

    # Confirmed: it runs, and the journal entry shows its step.
    page.get_by_role("button", name="Run it").click()
    expect(page).to_have_url(re.compile(r"/ops/journal/\d+/$"))
    expect(page.get_by_role("status")).to_contain_text("Done: close shards 0..3")
    expect(page.locator("table.data")).to_contain_text("shard map version 2 published")
    shoot(page, "console-journal-entry")
    nav.get_by_role("link", name="Journal").click()
    expect(page.locator("table.data tbody tr")).to_have_count(2)  # the dry run and the run
    shoot(page, "console-journal")
    nav.get_by_role("link", name="Topology").click()
    expect(page.get_by_role("heading", name="In force: shards v2")).to_be_visible()
    expect(page.locator("pre.json")).to_contain_text("[\n      4,\n      15\n    ]")
    shoot(page, "console-topology-after")

    # The admin: the journal, read-only.
    page.goto("/admin/ops/journalentry/")
    expect(page.get_by_text("close shards 0..3").first).to_be_visible()
    expect(page.get_by_role("link", name=re.compile("Add journal entry"))).to_have_count(0)
    shoot(page, "console-admin-journal")
