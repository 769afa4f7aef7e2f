"""Search in real Chromium: a visitor types in the header's search box, scrolls through more
pins than one page holds, and looks through the boards and pinners tabs; a secret board
and its pins stay out of what they find, and its owner finds them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.test_journey import header
from toolkit.images import numbered_png

try:
    from playwright.sync_api import expect
except ImportError:  # the playwright fixture skips (or, under CI=true, fails) with the reason
    expect = None

if TYPE_CHECKING:
    from playwright.sync_api import APIRequestContext, Page, Playwright

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"


def pinner(api: APIRequestContext, name: str) -> dict[str, str]:
    """A pinner made through the JSON API; the headers of their token."""
    created = api.post(
        "/api/v1/users",
        data={"username": name, "email": f"{name}@example.com", "password": PASSWORD},
    )
    assert created.status == 201, created.text()
    token = api.post("/api/v1/auth/token", data={"username": name, "password": PASSWORD})
    assert token.ok, token.text()
    return {"Authorization": f"Token {token.json()['token']}"}


def test_a_visitor_searches_from_the_header_and_scrolls_the_results(
    open_page: Callable[..., Page], shoot: Callable[[Page, str], Path], playwright: Playwright,
    site_url: str,
) -> None:  # fmt: skip
    # tess: a board "Glazes" of 55 pins saying "celadon" (one upload, saved 54 times), and a
    # secret board "Secret celadon tests" with one more.
    api = playwright.request.new_context(base_url=site_url)
    try:
        auth = pinner(api, "tess")
        api.patch("/api/v1/me", data={"display_name": "Tess Celadon"}, headers=auth)
        board = api.post("/api/v1/boards", data={"name": "Glazes"}, headers=auth).json()
        image = {"name": "1.png", "mimeType": "image/png", "buffer": numbered_png(3, (300, 360))}
        first = api.post(
            "/api/v1/pins",
            multipart={"board_id": board["id"], "description": "Celadon bowl 0", "image": image},
            headers=auth,
        )
        assert first.status == 201, first.text()
        for n in range(1, 55):
            saved = api.post(
                f"/api/v1/pins/{first.json()['id']}/save",
                data={"board_id": board["id"], "description": f"Celadon bowl {n}"},
                headers=auth,
            )
            assert saved.status == 201, saved.text()
        secret = api.post(
            "/api/v1/boards", data={"name": "Secret celadon tests", "secret": True}, headers=auth
        ).json()
        hidden = api.post(
            f"/api/v1/pins/{first.json()['id']}/save",
            data={"board_id": secret["id"], "description": "Celadon, not yet right"},
            headers=auth,
        )
        assert hidden.status == 201, hidden.text()
    finally:
        api.dispose()

    visitor = open_page()
    visitor.goto("/")
    box = header(visitor).get_by_role("searchbox", name="Search")
    box.fill("celadon")
    box.press("Enter")
    expect(visitor).to_have_url(f"{site_url}search/?q=celadon")
    expect(visitor.get_by_role("heading", level=1)).to_have_text("Results for “celadon”")
    chunks = visitor.locator("#results > .grid")
    expect(chunks.first.locator(".pin")).to_have_count(50)
    expect(chunks.first.locator(".pin").first).to_contain_text("Celadon bowl 54")  # newest
    expect(visitor.get_by_text("not yet right")).to_have_count(0)
    shoot(visitor, "search-pins")

    visitor.get_by_role("link", name="More pins").scroll_into_view_if_needed()
    visitor.mouse.wheel(0, 20_000)
    expect(chunks).to_have_count(2)
    expect(chunks.nth(1).locator(".pin")).to_have_count(5)
    expect(chunks.nth(1).locator(".pin").last).to_contain_text("Celadon bowl 0")  # oldest
    expect(visitor.get_by_role("link", name="More pins")).to_have_count(0)
    hrefs = visitor.locator("#results .pin").evaluate_all("pins => pins.map(pin => pin.href)")
    assert len(hrefs) == len(set(hrefs)) == 55
    shoot(visitor, "search-pins-scrolled")

    tabs = visitor.get_by_role("navigation", name="Kinds of result")
    tabs.get_by_role("link", name="Boards").click()
    expect(visitor.locator(".board-card")).to_have_count(0)  # "Glazes" does not say it
    expect(visitor.get_by_text("No boards match")).to_be_visible()
    box.fill("glaze")  # the new query stays on the boards tab
    box.press("Enter")
    expect(visitor.locator(".board-card")).to_have_count(1)
    expect(visitor.locator(".board-card")).to_contain_text("Glazes")
    shoot(visitor, "search-boards")
    tabs.get_by_role("link", name="Pinners").click()
    expect(visitor.locator(".person")).to_have_count(0)
    box.fill("celadon")
    box.press("Enter")
    expect(visitor.locator(".person")).to_have_count(1)
    expect(visitor.locator(".person")).to_contain_text("Tess Celadon")
    shoot(visitor, "search-pinners")

    tess = open_page()
    tess.goto("/login/")
    tess.get_by_label("Username or email").fill("tess")
    tess.get_by_label("Password").fill(PASSWORD)
    tess.get_by_role("button", name="Log in").click()
    tess.goto("/search/?q=celadon+tests&type=boards")
    expect(tess.locator(".board-card")).to_contain_text("Secret celadon tests")
    tess.goto("/search/?q=not+yet+right")
    expect(tess.locator("#results .pin")).to_have_count(1)
    shoot(tess, "search-own-secret-pin")
