"""A pinner's avatar in real Chromium, on a 360-pixel-wide phone: uploaded on the settings
page, then seen on their pin cards (home feed, board, what a visitor sees), on their
profile and in the top bar; removed, their initial is back. Every step is screenshot and
checked by axe-core (``shoot``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.conftest import LOADED_WIDTH
from tests.browser.test_small_screens import HEIGHT, PASSWORD, WIDTH, make_pinner
from toolkit.images import numbered_png

try:
    from playwright.sync_api import expect
except ImportError:  # the playwright fixture skips (or, under CI=true, fails) with the reason
    expect = None

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page, Playwright

pytestmark = pytest.mark.browser

Shoot = Callable[["Page", str], Path]
#: What the page is wider than its screen by (0 when nothing sticks out).
_OVERFLOW = "() => document.documentElement.scrollWidth - window.innerWidth"


def cards_by(page: Page, name: str) -> Locator:
    """The grid's credit lines naming ``name`` as the pinner."""
    return page.locator("#pins .pin-card .credit").filter(
        has=page.locator(".credit-name", has_text=name)
    )


def fits(page: Page) -> None:
    assert page.evaluate(_OVERFLOW) <= 0, f"{page.url} is wider than {WIDTH} px"


def test_a_pinner_uploads_an_avatar_and_sees_it_on_their_pin_cards(
    open_page: Callable[..., Page], shoot: Shoot, playwright: Playwright, site_url: str
) -> None:
    fay = make_pinner(playwright, site_url, "fay")
    board = f"/fay/{fay['board']['slug']}/"
    page = open_page(WIDTH, HEIGHT)
    page.goto("/login/")
    page.get_by_label("Username or email").fill("fay")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Hello, fay")).to_be_visible()
    card = cards_by(page, "fay").first
    expect(card.locator(".avatar")).to_have_text("F")  # no picture yet: her initial
    expect(card.locator(".credit-board")).to_have_text("Small things")

    page.goto("/settings/")
    expect(page.get_by_role("heading", name="Your picture")).to_be_visible()
    expect(page.get_by_role("button", name="Remove picture")).to_have_count(0)
    fits(page)
    shoot(page, "avatar-settings")
    picture = {"name": "fay.png", "mimeType": "image/png", "buffer": numbered_png(5, (320, 200))}
    page.get_by_label("A picture of you").set_input_files(picture)
    page.get_by_role("button", name="Upload picture").click()
    expect(page).to_have_url(re.compile(r"/settings/$"))
    expect(page.get_by_role("status")).to_contain_text("Your picture is saved.")
    head = page.locator(".picture .avatar img")
    expect(head).to_have_attribute("src", re.compile(r"/media/avatars/.+_120\.jpg$"))
    assert head.evaluate(LOADED_WIDTH) == 120
    expect(page.locator("header.topbar .avatar img")).to_have_count(1)
    fits(page)
    shoot(page, "avatar-saved")

    # Her cards show it: on her home feed, on her board, and to a visitor.
    page.get_by_role("link", name="pinboard").click()
    small = cards_by(page, "fay").first.locator(".avatar img")
    expect(small).to_have_attribute("src", re.compile(r"/media/avatars/.+_60\.jpg$"))
    assert small.evaluate(LOADED_WIDTH) == 60
    src = small.get_attribute("src")
    fits(page)
    shoot(page, "avatar-home-cards")
    page.goto(board)
    expect(cards_by(page, "fay").locator(".avatar img")).to_have_count(1)
    cards_by(page, "fay").first.locator(".credit-board").click()
    expect(page).to_have_url(re.compile(re.escape(board) + "$"))
    cards_by(page, "fay").first.locator(".credit-pinner").click()
    expect(page).to_have_url(re.compile(r"/fay/$"))
    expect(page.locator(".profile-head .avatar img")).to_have_count(1)
    fits(page)
    shoot(page, "avatar-profile")
    visitor = open_page(WIDTH, HEIGHT)
    visitor.goto("/")
    expect(cards_by(visitor, "fay").first.locator(".avatar img")).to_have_attribute(
        "src", src or ""
    )
    fits(visitor)
    shoot(visitor, "avatar-visitor-cards")

    # Removed: her initial again, with no picture to load.
    page.goto("/settings/")
    page.get_by_role("button", name="Remove picture").click()
    expect(page.get_by_role("status")).to_contain_text("your initial shows instead")
    expect(page.locator(".picture .avatar")).to_have_text("F")
    page.goto(board)
    expect(cards_by(page, "fay").locator(".avatar img")).to_have_count(0)
    expect(cards_by(page, "fay").first.locator(".avatar")).to_have_text("F")
    shoot(page, "avatar-removed")
