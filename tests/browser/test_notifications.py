"""Two pinners in two browsers: one likes, saves and comments on the other's pin, follows
their board, then them; the other sees the count in the header, then the five on the
notifications page, which they mark read."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from toolkit.images import numbered_png

try:
    from playwright.sync_api import expect
except ImportError:  # the playwright fixture skips (or, under CI=true, fails) with the reason
    expect = None

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page, Playwright

pytestmark = pytest.mark.browser

Shoot = Callable[["Page", str], Path]
PASSWORD = "correct horse battery"


def bell(page: Page) -> Locator:
    return page.locator("header.topbar").get_by_role("link", name=re.compile(r"^Notifications"))


def pinner_with_a_pin(playwright: Playwright, site_url: str, name: str) -> dict[str, str]:
    """A pinner with a board "Garden" and a pin on it, made through the JSON API."""
    api = playwright.request.new_context(base_url=site_url)
    try:
        created = api.post(
            "/api/v1/users",
            data={"username": name, "email": f"{name}@example.com", "password": PASSWORD},
        )
        assert created.status == 201, created.text()
        token = api.post("/api/v1/auth/token", data={"username": name, "password": PASSWORD})
        auth = {"Authorization": f"Token {token.json()['token']}"}
        board = api.post("/api/v1/boards", data={"name": "Garden"}, headers=auth).json()
        image = {"name": "1.png", "mimeType": "image/png", "buffer": numbered_png(3, (400, 300))}
        pin = api.post(
            "/api/v1/pins",
            multipart={"board_id": board["id"], "description": "Tulips in May", "image": image},
            headers=auth,
        )
        assert pin.status == 201, pin.text()
        return {"board": f"/{name}/{board['slug']}/", "pin": f"/pin/{pin.json()['id']}/"}
    finally:
        api.dispose()


def test_what_one_pinner_does_the_other_sees_counted_then_listed(
    open_page: Callable[[], Page], shoot: Shoot, playwright: Playwright, site_url: str
) -> None:
    kit = pinner_with_a_pin(playwright, site_url, "kit")

    ivy = open_page()
    ivy.goto("/signup/")
    ivy.get_by_label("Username").fill("ivy")
    ivy.get_by_label("Email").fill("ivy@example.com")
    ivy.get_by_label("Password").fill(PASSWORD)
    ivy.get_by_role("button", name="Sign up").click()
    expect(ivy.get_by_role("heading", name="Hello, ivy")).to_be_visible()
    expect(bell(ivy)).to_have_accessible_name("Notifications")  # nothing to count
    ivy.goto("/boards/new/")
    ivy.get_by_label("Name").fill("Flowers")
    ivy.get_by_role("button", name="Create board").click()
    expect(ivy.get_by_role("heading", level=1)).to_have_text("Flowers")

    ivy.goto(kit["pin"])
    ivy.get_by_role("button", name="♡ Like").click()
    expect(ivy.get_by_role("button", name="♥ Liked")).to_be_visible()
    ivy.get_by_label("Board to save to").select_option(label="Flowers")
    ivy.get_by_role("button", name="Save", exact=True).click()
    expect(ivy.get_by_role("status")).to_contain_text("Saved.")
    ivy.get_by_label("Comment").fill("They look like spring.")
    ivy.get_by_role("button", name="Post").click()
    expect(ivy.locator("#comments .comment")).to_contain_text("They look like spring.")
    ivy.goto(kit["board"])
    ivy.locator("main").get_by_role("button", name="Follow").click()
    expect(ivy.locator("main").get_by_role("button", name="Following")).to_be_visible()
    ivy.goto("/kit/")
    ivy.locator("main").get_by_role("button", name="Follow").click()
    expect(ivy.locator("main").get_by_role("button", name="Following")).to_be_visible()
    shoot(ivy, "ivy-follows-kit")

    kit_page = open_page()  # another browser context: kit's own cookies
    kit_page.goto("/login/")
    kit_page.get_by_label("Username or email").fill("kit")
    kit_page.get_by_label("Password").fill(PASSWORD)
    kit_page.get_by_role("button", name="Log in").click()
    expect(kit_page.get_by_role("heading", name="Hello, kit")).to_be_visible()
    expect(bell(kit_page)).to_have_accessible_name("Notifications 5 unread")
    expect(bell(kit_page).locator(".badge")).to_have_text("5 unread")
    shoot(kit_page, "kit-home-five-unread")

    bell(kit_page).click()
    expect(kit_page.get_by_role("heading", name="Notifications")).to_be_visible()
    items = kit_page.locator("li.notification")
    expect(items).to_have_count(5)
    expected = [
        "ivy followed you",
        "ivy followed your board Garden",
        "ivy commented on your pin: They look like spring.",
        "ivy saved your pin",
        "ivy liked your pin",
    ]
    for n, words in enumerate(expected):
        expect(items.nth(n).locator(".notification-text")).to_contain_text(words)
    expect(kit_page.locator("li.notification.unread")).to_have_count(5)  # as they arrived
    expect(bell(kit_page).locator(".badge")).to_have_text("5 unread")  # a visit marks nothing
    shoot(kit_page, "kit-notifications")
    kit_page.get_by_role("button", name="Mark as read").click()
    expect(bell(kit_page).locator(".badge")).to_have_count(0)  # and now read

    items.nth(4).locator(".notification-pin").click()
    expect(kit_page).to_have_url(re.compile(re.escape(kit["pin"]) + "$"))
    expect(bell(kit_page).locator(".badge")).to_have_count(0)
    kit_page.goto("/notifications/")
    expect(kit_page.locator("li.notification.unread")).to_have_count(0)

    ivy.goto("/notifications/")
    expect(ivy.get_by_text("Nothing yet")).to_be_visible()
    shoot(ivy, "ivy-no-notifications")
