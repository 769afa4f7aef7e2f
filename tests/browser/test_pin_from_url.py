"""A pinner pastes a web page's URL on the new-pin page, in real Chromium: the site fetches
the page from a web server the test runs on loopback (which tests/browser/settings.py
allows), pins the image the page names and links the pin to the page."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.conftest import LOADED_WIDTH
from toolkit.images import numbered_png
from toolkit.web_pages import Route, WebPages

try:
    from playwright.sync_api import expect
except ImportError:  # the playwright fixture skips (or, under CI=true, fails) with the reason
    expect = None

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
PAGE = b"""<!doctype html><html><head><title>Fig jam</title>
<meta property="og:image" content="images/jam.png"></head>
<body><h1>Fig jam</h1><img src="images/logo.png" width="40" height="40"></body></html>"""


@pytest.fixture
def web() -> Iterator[WebPages]:
    with WebPages() as pages:
        pages.routes["/recipes/fig-jam.html"] = Route(PAGE)
        pages.routes["/recipes/images/jam.png"] = Route(numbered_png(7, (480, 360)), "image/png")
        yield pages


def test_a_pinner_pins_a_web_page_by_its_url(
    open_page: Callable[..., Page], shoot: Callable[[Page, str], Path], web: WebPages
) -> None:
    pia = open_page()
    pia.goto("/signup/")
    pia.get_by_label("Username").fill("pia")
    pia.get_by_label("Email").fill("pia@example.com")
    pia.get_by_label("Password").fill(PASSWORD)
    pia.get_by_role("button", name="Sign up").click()
    expect(pia.get_by_role("heading", name="Hello, pia")).to_be_visible()
    pia.locator("header.topbar").get_by_role("link", name="New board").click()
    pia.get_by_label("Name").fill("Jams")
    pia.get_by_role("button", name="Create board").click()
    expect(pia.get_by_role("heading", level=1)).to_have_text("Jams")

    # A URL the site will not fetch: refused on the form, which keeps what was typed.
    pia.get_by_role("link", name="Add a pin").click()
    expect(pia.get_by_role("heading", name="Create pin")).to_be_visible()
    url_field = pia.get_by_label("Or an image or page URL")
    url_field.fill("ftp://example.com/jam.png")
    pia.get_by_role("button", name="Create pin").click()
    expect(pia.locator(".field-error")).to_have_text(
        "could not fetch the image: only http and https URLs can be fetched"
    )
    expect(url_field).to_have_value("ftp://example.com/jam.png")
    shoot(pia, "pia-pin-url-refused")

    # The page's URL: its og:image is pinned, and the pin links to the page.
    page_url = web.url("/recipes/fig-jam.html")
    url_field.fill(page_url)
    pia.get_by_label("Description").fill("Fig jam, from the web")
    shoot(pia, "pia-pin-url-form")
    pia.get_by_role("button", name="Create pin").click()
    expect(pia).to_have_url(re.compile(r"/pin/\d+/$"))
    picture = pia.locator(".pin-image img")
    expect(picture).to_be_visible()
    assert picture.evaluate(LOADED_WIDTH) == 480
    expect(pia.locator(".pin-description")).to_have_text("Fig jam, from the web")
    expect(pia.locator("a.pin-link")).to_have_attribute("href", page_url)
    shoot(pia, "pia-pin-from-url")
    assert [seen.path for seen in web.seen] == ["/recipes/fig-jam.html", "/recipes/images/jam.png"]
