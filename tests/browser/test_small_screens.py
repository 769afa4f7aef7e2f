"""Every page on a 360-pixel-wide phone, signed out and signed in: nothing wider than the
screen, every control reachable with the keyboard, and (through ``shoot``) no serious or
critical axe-core violation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from toolkit.images import numbered_png

if TYPE_CHECKING:
    from playwright.sync_api import Page, Playwright

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
WIDTH, HEIGHT = 360, 740

#: What the page is wider than its screen by (0 when nothing sticks out).
_OVERFLOW = "() => document.documentElement.scrollWidth - window.innerWidth"

#: The visible controls of the page, as the Tab walk starts (a grid that grows as the
#: walk scrolls it is not the page that was checked, and a "More pins" link it loads is
#: gone from the page). A control with tabindex=-1 is out of the order on purpose (a
#: duplicate link).
_CONTROLS = """() => {
  window.__reached = new Set();
  window.__controls = [...document.querySelectorAll(
    'a[href], button, input:not([type=hidden]), select, textarea')]
    .filter(e => e.tabIndex >= 0 && e.getClientRects().length && !e.closest('[hidden], [inert]'));
  if (document.activeElement) document.activeElement.blur();
  return window.__controls.length;
}"""
#: Note the focused element; how many controls are still unreached.
_NOTE_FOCUS = """() => {
  window.__reached.add(document.activeElement);
  return window.__controls.filter(e => e.isConnected && !window.__reached.has(e)).length;
}"""
_UNREACHED = """() => window.__controls
  .filter(e => e.isConnected && !window.__reached.has(e)).map(e => e.outerHTML.slice(0, 80))"""


def make_pinner(playwright: Playwright, site_url: str, name: str) -> dict[str, Any]:
    """A pinner with a board and a pin, made through the JSON API."""
    api = playwright.request.new_context(base_url=site_url)
    try:
        created = api.post(
            "/api/v1/users",
            data={"username": name, "email": f"{name}@example.com", "password": PASSWORD},
        )
        assert created.status == 201, created.text()
        token = api.post("/api/v1/auth/token", data={"username": name, "password": PASSWORD})
        auth = {"Authorization": f"Token {token.json()['token']}"}
        board = api.post("/api/v1/boards", data={"name": "Small things"}, headers=auth).json()
        image = {"name": "1.png", "mimeType": "image/png", "buffer": numbered_png(7, (300, 400))}
        pin = api.post(
            "/api/v1/pins",
            multipart={"board_id": board["id"], "description": "A small thing", "image": image},
            headers=auth,
        )
        assert pin.status == 201, pin.text()
        return {"name": name, "board": board, "pin": pin.json()}
    finally:
        api.dispose()


def unreached_by_keyboard(page: Page) -> list[str]:
    """The page's controls that Tab never focused, pressed until it has focused them all
    or pressed three times as often as there are controls (new pins loaded on the way
    take presses too)."""
    count = page.evaluate(_CONTROLS)
    for _ in range(3 * count + 2):
        page.keyboard.press("Tab")
        if page.evaluate(_NOTE_FOCUS) == 0:
            break
    unreached: list[str] = page.evaluate(_UNREACHED)
    return unreached


def check(page: Page, shoot: Callable[[Page, str], Path], path: str, step: str) -> None:
    response = page.goto(path)
    assert response is not None and response.status == 200, (path, response)
    assert page.evaluate(_OVERFLOW) <= 0, f"{path} is wider than {WIDTH} px"
    assert unreached_by_keyboard(page) == [], f"{path}: controls Tab never reaches"
    shoot(page, f"small-{step}")


def test_every_page_fits_a_small_screen_and_works_by_keyboard(
    open_page: Callable[..., Page],
    shoot: Callable[[Page, str], Path],
    playwright: Playwright,
    site_url: str,
) -> None:
    dee = make_pinner(playwright, site_url, "dee")
    board, pin = f"/dee/{dee['board']['slug']}/", f"/pin/{dee['pin']['id']}/"
    public = {
        "landing": "/",
        "signup": "/signup/",
        "login": "/login/",
        "profile": "/dee/",
        "followers": "/dee/followers/",
        "following": "/dee/following/",
        "likes": "/dee/likes/",
        "board": board,
        "pin": pin,
        "search": "/search/?q=small",
        "search-boards": "/search/?q=small&type=boards",
        "search-pinners": "/search/?q=dee&type=pinners",
    }
    visitor = open_page(WIDTH, HEIGHT)
    for step, path in public.items():
        check(visitor, shoot, path, f"visitor-{step}")

    visitor.goto("/login/")
    visitor.get_by_label("Username or email").fill("dee")
    visitor.get_by_label("Password").fill(PASSWORD)
    visitor.get_by_role("button", name="Log in").click()
    visitor.wait_for_url(site_url)
    own = {
        **public,
        "new-pin": "/pin/new/",
        "new-board": "/boards/new/",
        "settings": "/settings/",
        "password": "/settings/password/",
        "notifications": "/notifications/",
        "edit-pin": f"/pin/{dee['pin']['id']}/edit/",
        "edit-board": f"/boards/{dee['board']['id']}/edit/",
    }
    for step, path in own.items():
        check(visitor, shoot, path, f"dee-{step}")
