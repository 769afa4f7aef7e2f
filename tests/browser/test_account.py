"""A pinner's account in real Chromium: a display name and an about text, then deleting
the account (confirmed twice: the password, then the browser's dialog)."""

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
    from playwright.sync_api import Dialog, Page

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"


def test_a_pinner_names_themself_then_deletes_the_account(
    open_page: Callable[..., Page], shoot: Callable[[Page, str], Path]
) -> None:
    eve = open_page()
    eve.goto("/signup/")
    eve.get_by_label("Username").fill("eve")
    eve.get_by_label("Email").fill("eve@example.com")
    eve.get_by_label("Password").fill(PASSWORD)
    eve.get_by_role("button", name="Sign up").click()
    expect(eve.get_by_role("heading", name="Hello, eve")).to_be_visible()

    eve.goto("/eve/")
    eve.get_by_role("link", name="Edit profile").click()
    expect(eve.get_by_role("heading", name="Your profile")).to_be_visible()
    eve.get_by_label("Display name").fill("Eve Moss")
    eve.get_by_label("About you").fill("Ferns, mostly.")
    shoot(eve, "eve-settings")
    eve.get_by_role("button", name="Save", exact=True).click()
    expect(eve).to_have_url(re.compile(r"/eve/$"))
    expect(eve.get_by_role("heading", level=1)).to_have_text("Eve Moss")
    expect(eve.locator(".profile-head .handle")).to_have_text("@eve")
    expect(eve.locator(".profile-head .lead")).to_have_text("Ferns, mostly.")
    shoot(eve, "eve-profile-named")

    eve.get_by_role("link", name="Edit profile").click()
    eve.get_by_label("Your password").fill("not my password")
    dialogs: list[str] = []

    def accept(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.accept()

    eve.on("dialog", accept)
    eve.get_by_role("button", name="Delete account").click()
    expect(eve.get_by_role("alert")).to_contain_text("the password is wrong")
    assert eve.url.endswith("/settings/delete/")
    shoot(eve, "eve-delete-refused")
    eve.get_by_label("Your password").fill(PASSWORD)
    eve.get_by_role("button", name="Delete account").click()
    expect(eve.get_by_role("status")).to_contain_text("Your account is deleted.")
    expect(eve.locator("header.topbar").get_by_role("link", name="Log in")).to_be_visible()
    assert len(dialogs) == 2 and "cannot be undone" in dialogs[0]
    shoot(eve, "eve-deleted")
    response = eve.goto("/eve/")
    assert response is not None and response.status == 404
