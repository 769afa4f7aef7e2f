"""Boards shared or not, in real Chromium with two pinners: sid keeps a board secret and
pins to it, and tom, who follows sid, finds neither the board nor its pin (a 404, as for a
board that does not exist) until sid makes it public; una invites vic to a group board,
vic pins to it, and una removes vic."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.test_journey import header, sign_up
from toolkit.images import numbered_png

try:
    from playwright.sync_api import expect
except ImportError:  # the playwright fixture skips (or, under CI=true, fails) with the reason
    expect = None

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser


def test_a_secret_board_is_its_owners_alone_until_made_public(
    open_page: Callable[..., Page], shoot: Callable[[Page, str], Path], tmp_path: Path
) -> None:
    sid, tom = open_page(), open_page()
    sign_up(sid, shoot, "sid", "sid")
    sign_up(tom, shoot, "tom", "tom")
    tom.goto("/sid/")
    tom.get_by_role("button", name="Follow").click()
    expect(tom.get_by_role("button", name="Following")).to_be_visible()

    header(sid).get_by_role("link", name="New board").click()
    sid.get_by_label("Name").fill("Diary")
    sid.get_by_label("Keep this board secret").check()
    shoot(sid, "sid-secret-board-form")
    sid.get_by_role("button", name="Create board").click()
    expect(sid.get_by_role("heading", level=1)).to_have_text(re.compile(r"Secret\s+Diary"))
    board_url = sid.url
    sid.get_by_role("link", name="Add a pin").click()
    image = tmp_path / "page.png"
    image.write_bytes(numbered_png(7, (500, 400)))
    sid.locator("input[name=image]").set_input_files(image)
    sid.get_by_label("Description").fill("Dear diary")
    sid.get_by_role("button", name="Create pin").click()
    expect(sid).to_have_url(re.compile(r"/pin/\d+/$"))
    pin_url = sid.url
    sid.goto("/sid/")
    expect(sid.get_by_role("heading", name="Secret boards")).to_be_visible()
    shoot(sid, "sid-profile-secret-boards")

    for url in (board_url, pin_url):
        response = tom.goto(url)
        assert response is not None and response.status == 404, url
    shoot(tom, "tom-secret-pin-not-found")
    tom.goto("/sid/")
    expect(tom.get_by_text("Diary")).to_have_count(0)
    tom.goto("/")
    expect(tom.get_by_text("Dear diary")).to_have_count(0)

    sid.goto(board_url)
    sid.get_by_role("link", name="Edit board").click()
    sid.get_by_label("Keep this board secret").uncheck()
    sid.get_by_role("button", name="Save").click()
    expect(sid.get_by_role("heading", level=1)).to_have_text("Diary")

    response = tom.goto(pin_url)
    assert response is not None and response.status == 200
    tom.goto("/")
    expect(tom.locator(f'a[href="{re.sub(r"^https?://[^/]+", "", pin_url)}"]')).to_have_count(1)
    shoot(tom, "tom-feed-board-made-public")


def test_a_group_board_takes_the_pins_of_its_collaborators(
    open_page: Callable[..., Page], shoot: Callable[[Page, str], Path], tmp_path: Path
) -> None:
    una, vic = open_page(), open_page()
    sign_up(una, shoot, "una", "una")
    sign_up(vic, shoot, "vic", "vic")
    header(una).get_by_role("link", name="New board").click()
    una.get_by_label("Name").fill("Road trip")
    una.get_by_role("button", name="Create board").click()
    board_url = una.url
    una.get_by_label("Invite a pinner by username").fill("vic")
    una.get_by_role("button", name="Invite").click()
    expect(una.get_by_role("button", name="Remove vic")).to_be_visible()
    shoot(una, "una-group-board-invited")

    vic.goto("/vic/")  # invited, not yet a collaborator: no group board on his profile
    expect(vic.get_by_role("heading", name="Group boards")).to_have_count(0)
    vic.goto("/notifications/")
    expect(vic.get_by_text("invites you to pin to their board")).to_be_visible()
    shoot(vic, "vic-invited-to-a-group-board")
    vic.get_by_role("button", name="Accept").click()
    expect(vic.get_by_role("link", name="Add a pin")).to_be_visible()
    vic.goto("/vic/")
    expect(vic.get_by_role("heading", name="Group boards")).to_be_visible()
    vic.goto(board_url)
    vic.get_by_role("link", name="Add a pin").click()
    expect(vic.locator("select[name=board] option:checked")).to_have_text("Road trip")
    image = tmp_path / "road.png"
    image.write_bytes(numbered_png(8, (480, 360)))
    vic.locator("input[name=image]").set_input_files(image)
    vic.get_by_label("Description").fill("Gas station at dawn")
    vic.get_by_role("button", name="Create pin").click()
    expect(vic).to_have_url(re.compile(r"/pin/\d+/$"))

    una.goto(board_url)
    expect(una.get_by_text("Gas station at dawn")).to_be_visible()
    una.get_by_role("button", name="Remove vic").click()
    expect(una.get_by_role("button", name="Remove vic")).to_have_count(0)
    shoot(una, "una-group-board-vic-removed")
    vic.goto(board_url)
    expect(vic.get_by_role("link", name="Add a pin")).to_have_count(0)
    expect(vic.get_by_text("Gas station at dawn")).to_be_visible()  # his pin stays
