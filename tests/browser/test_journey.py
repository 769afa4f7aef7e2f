"""Two pinners walk through the site in real Chromium; a long board scrolls endlessly.

Every page visited is checked for what it shows and kept as a full-page
screenshot in test-artifacts/screenshots/ (see conftest.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.conftest import LOADED_WIDTH
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


def stat(page: Page, word: str) -> Locator:
    """The number of a page's "<n> <word>s" statistic (pins, followers, likes, ...)."""
    return (
        page.locator(".stats > *")
        .filter(has_text=re.compile(rf"\d+\s+{word}s?\b"))
        .locator("strong")
    )


def header(page: Page) -> Locator:
    return page.locator("header.topbar")


def sign_up(page: Page, shoot: Shoot, username: str, step: str) -> None:
    page.goto("/")
    header(page).get_by_role("link", name="Sign up").click()
    expect(page).to_have_url(re.compile(r"/signup/$"))
    expect(page.get_by_role("heading", name="Sign up")).to_be_visible()
    page.get_by_label("Username").fill(username)
    page.get_by_label("Email").fill(f"{username}@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    shoot(page, f"{step}-signup-form")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", name=f"Hello, {username}")).to_be_visible()
    expect(header(page).get_by_role("button", name="Log out")).to_be_visible()
    shoot(page, f"{step}-home")


def new_board(page: Page, shoot: Shoot, name: str, description: str, step: str) -> None:
    header(page).get_by_role("link", name="New board").click()
    expect(page.get_by_role("heading", name="New board")).to_be_visible()
    page.get_by_label("Name").fill(name)
    page.get_by_label("Description").fill(description)
    shoot(page, f"{step}-board-form")
    page.get_by_role("button", name="Create board").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(name)
    expect(stat(page, "pin")).to_have_text("0")
    expect(page.get_by_text("No pins here yet.")).to_be_visible()
    shoot(page, f"{step}-board-empty")


def test_two_pinners_pin_like_comment_save_and_follow(
    open_page: Callable[[], Page], shoot: Shoot, site_url: str, tmp_path: Path
) -> None:
    ada = open_page()

    # A visitor lands, signs up, logs out and logs back in (with the email).
    ada.goto("/")
    expect(ada.get_by_role("heading", name="Find ideas.")).to_be_visible()
    shoot(ada, "landing")
    sign_up(ada, shoot, "ada", "ada")
    header(ada).get_by_role("button", name="Log out").click()
    expect(header(ada).get_by_role("link", name="Log in")).to_be_visible()
    header(ada).get_by_role("link", name="Log in").click()
    expect(ada.get_by_role("heading", name="Log in")).to_be_visible()
    ada.get_by_label("Username or email").fill("ADA@example.com")
    ada.get_by_label("Password").fill("wrong password")
    ada.get_by_role("button", name="Log in").click()
    expect(ada.get_by_role("alert")).to_contain_text("wrong username, email or password")
    shoot(ada, "login-refused")
    ada.get_by_label("Password").fill(PASSWORD)
    ada.get_by_role("button", name="Log in").click()
    expect(ada.get_by_role("heading", name="Hello, ada")).to_be_visible()
    expect(ada.get_by_text("Your home feed is empty")).to_be_visible()

    # ada makes a board and pins an uploaded image to it.
    new_board(ada, shoot, "Sunny Recipes", "Lemons, mostly.", "ada")
    board_url = ada.url
    ada.get_by_role("link", name="Add a pin").click()
    expect(ada.get_by_role("heading", name="Create pin")).to_be_visible()
    expect(ada.get_by_label("Board")).to_have_value(re.compile(r"^\d+$"))
    expect(ada.locator("select[name=board] option:checked")).to_have_text("Sunny Recipes")
    image = tmp_path / "lemon.png"
    image.write_bytes(numbered_png(1, (600, 450)))
    ada.locator("input[name=image]").set_input_files(image)
    ada.get_by_label("Description").fill("Lemon tart with a crisp crust")
    ada.get_by_label("Link").fill("https://example.com/lemon-tart")
    shoot(ada, "ada-pin-form")
    ada.get_by_role("button", name="Create pin").click()
    expect(ada).to_have_url(re.compile(r"/pin/\d+/$"))
    pin_url = ada.url
    picture = ada.locator(".pin-image img")
    expect(picture).to_be_visible()
    assert picture.evaluate(LOADED_WIDTH) == 600
    expect(ada.locator(".pin-description")).to_have_text("Lemon tart with a crisp crust")
    expect(ada.locator(".pin-info .byline")).to_contain_text("ada saved to Sunny Recipes")
    for word in ("like", "save", "comment"):
        expect(stat(ada, word)).to_have_text("0")
    expect(ada.get_by_text("No comments yet.")).to_be_visible()
    shoot(ada, "ada-pin")

    # She likes it and comments on it.
    ada.get_by_role("button", name="♡ Like").click()
    liked = ada.get_by_role("button", name="♥ Liked")
    expect(liked).to_have_attribute("aria-pressed", "true")
    expect(stat(ada, "like")).to_have_text("1")
    shoot(ada, "ada-pin-liked")
    ada.get_by_label("Comment").fill("Best with cream.")
    ada.get_by_role("button", name="Post").click()
    comment = ada.locator("#comments .comment")
    expect(comment).to_have_count(1)
    expect(comment).to_contain_text("ada")
    expect(comment).to_contain_text("Best with cream.")
    expect(stat(ada, "comment")).to_have_text("1")
    shoot(ada, "ada-pin-commented")

    # The board shows the pin; the profile shows the board with its cover.
    ada.goto(board_url)
    expect(stat(ada, "pin")).to_have_text("1")
    expect(ada.locator("#pins .pin")).to_have_count(1)
    shoot(ada, "ada-board")

    # bob signs up (ADA is taken, whatever the case), makes a board, saves ada's pin.
    bob = open_page()
    bob.goto("/signup/")
    bob.get_by_label("Username").fill("ADA")
    bob.get_by_label("Email").fill("someone@example.com")
    bob.get_by_label("Password").fill(PASSWORD)
    bob.get_by_role("button", name="Sign up").click()
    expect(bob.locator(".field-error")).to_contain_text("taken")
    shoot(bob, "bob-signup-taken")
    sign_up(bob, shoot, "bob", "bob")
    new_board(bob, shoot, "Bob's Finds", "Things I found.", "bob")
    bob.goto(pin_url)
    expect(bob.locator(".pin-info .byline")).to_contain_text("ada saved to Sunny Recipes")
    expect(bob.get_by_role("button", name="♡ Like")).to_be_visible()
    expect(bob.get_by_role("link", name="Edit")).to_have_count(0)
    bob.get_by_label("Board to save to").select_option(label="Bob's Finds")
    bob.get_by_role("button", name="Save", exact=True).click()
    expect(bob.get_by_role("status")).to_contain_text("Saved.")
    expect(stat(bob, "save")).to_have_text("1")
    shoot(bob, "bob-saved")
    bob.get_by_role("link", name="See your pin").click()
    expect(bob).not_to_have_url(pin_url)
    expect(bob.locator(".saved-from")).to_have_text("Saved from the original pin")
    expect(bob.locator(".pin-info .byline")).to_contain_text("bob saved to Bob's Finds")
    expect(bob.locator(".pin-description")).to_have_text("Lemon tart with a crisp crust")
    shoot(bob, "bob-saved-pin")
    bob.get_by_role("link", name="the original pin").click()
    expect(bob).to_have_url(pin_url)

    # bob likes it too and comments twice, deleting the first (ada's has no delete for him).
    bob.get_by_role("button", name="♡ Like").click()
    expect(stat(bob, "like")).to_have_text("2")
    comments = bob.locator("#comments .comment")
    for text in ("Too sweet?", "Lovely."):
        bob.get_by_label("Comment", exact=True).fill(text)
        bob.get_by_role("button", name="Post").click()
    expect(comments).to_have_count(3)
    delete = "Delete this comment"
    expect(comments.filter(has_text="Best with cream.").get_by_role("button", name=delete)).to_have_count(0)  # fmt: skip
    shoot(bob, "bob-commented")
    comments.filter(has_text="Too sweet?").get_by_role("button", name=delete).click()
    expect(comments).to_have_count(2)
    expect(stat(bob, "comment")).to_have_text("2")

    # Then he follows ada from her profile.
    bob.locator(".pin-info .byline").get_by_role("link", name="ada", exact=True).click()
    expect(bob.get_by_role("heading", level=1)).to_have_text("ada")
    expect(stat(bob, "follower")).to_have_text("0")
    board_card = bob.locator(".board-card", has_text="Sunny Recipes")
    expect(board_card).to_contain_text("1 pin · 0 followers")
    expect(board_card.locator("img")).to_be_visible()
    shoot(bob, "bob-ada-profile")
    bob.locator(".profile-head").get_by_role("button", name="Follow").click()
    expect(bob.locator(".profile-head").get_by_role("button", name="Following")).to_be_visible()
    expect(stat(bob, "follower")).to_have_text("1")
    expect(board_card).to_contain_text("1 pin · 1 follower")
    shoot(bob, "bob-follows-ada")

    # Her pins reach bob's home feed.
    header(bob).locator(".logo").click()
    expect(bob.get_by_role("heading", name="Hello, bob")).to_be_visible()
    pin_path = pin_url.removeprefix(site_url.rstrip("/"))
    expect(bob.locator(f'#pins a.pin[href="{pin_path}"]')).to_contain_text("Lemon tart")
    shoot(bob, "bob-home-feed")

    # Following ada follows her boards.
    bob.goto("/ada/")
    board_card = bob.locator(".board-card", has_text="Sunny Recipes")
    board_card.click()
    expect(bob).to_have_url(board_url)
    expect(stat(bob, "follower")).to_have_text("1")
    expect(bob.get_by_role("button", name="Following")).to_be_visible()
    shoot(bob, "bob-ada-board")

    # The lists of followers and following, and bob's own profile.
    bob.goto("/ada/followers/")
    expect(bob.locator(".person")).to_have_count(1)
    expect(bob.locator(".person-name")).to_have_text("bob")
    shoot(bob, "ada-followers")
    bob.goto("/bob/following/")
    expect(bob.locator(".person-name")).to_have_text("ada")
    expect(bob.locator(".person").get_by_role("button", name="Following")).to_be_visible()
    shoot(bob, "bob-following")
    header(bob).locator(".avatar").click()
    expect(bob).to_have_url(re.compile(r"/bob/$"))
    expect(stat(bob, "following")).to_have_text("1")
    expect(stat(bob, "pin")).to_have_text("1")
    expect(bob.locator(".board-card", has_text="Bob's Finds")).to_contain_text("1 pin")
    shoot(bob, "bob-profile")
    bob.locator(".profile-head").get_by_role("link", name="1 like").click()
    expect(bob).to_have_url(re.compile(r"/bob/likes/$"))
    expect(bob.locator(f'#pins a.pin[href="{pin_path}"]')).to_contain_text("Lemon tart")
    shoot(bob, "bob-likes")

    # ada sees her follower and her pin's save, like and comment counts.
    ada.goto("/ada/")
    expect(stat(ada, "follower")).to_have_text("1")
    expect(ada.locator(".profile-head").get_by_role("button")).to_have_count(0)
    shoot(ada, "ada-profile")
    ada.goto(pin_url)
    expect(stat(ada, "like")).to_have_text("2")
    expect(stat(ada, "save")).to_have_text("1")
    expect(stat(ada, "comment")).to_have_text("2")
    # As the pin's owner she may delete any comment on it.
    ada.locator("#comments .comment", has_text="Lovely.").get_by_role("button", name=delete).click()
    expect(ada.locator("#comments .comment")).to_have_count(1)
    expect(stat(ada, "comment")).to_have_text("1")
    shoot(ada, "ada-deleted-a-comment")

    # bob logs out: the header offers logging in again, and pages ask for it.
    header(bob).get_by_role("button", name="Log out").click()
    expect(bob.get_by_role("heading", name="Find ideas.")).to_be_visible()
    expect(header(bob).get_by_role("link", name="Log in")).to_be_visible()
    shoot(bob, "bob-logged-out")

    # A visitor sees the newest pins; an action asks to log in, then comes back to the pin.
    card = bob.locator(f'#pins a.pin[href="{pin_path}"]')
    expect(card).to_be_visible()
    card.click()
    expect(bob).to_have_url(pin_url)
    bob.get_by_role("link", name="♡ Like").click()
    expect(bob).to_have_url(re.compile(r"/login/\?next="))
    bob.get_by_label("Username or email").fill("bob")
    bob.get_by_label("Password").fill(PASSWORD)
    bob.get_by_role("button", name="Log in").click()
    expect(bob).to_have_url(pin_url)
    expect(bob.get_by_role("button", name="♥ Liked")).to_be_visible()  # he had liked it
    header(bob).get_by_role("button", name="Log out").click()
    bob.goto("/pin/new/")
    expect(bob).to_have_url(re.compile(r"/login/\?next=%2Fpin%2Fnew%2F$"))


def test_board_pages_load_more_pins_on_scroll(
    open_page: Callable[[], Page], shoot: Shoot, playwright: Playwright, site_url: str
) -> None:
    # carol and her 55 pins come through the JSON API (the slow part is the
    # password hash of her token, not the uploads).
    api = playwright.request.new_context(base_url=site_url)
    try:
        created = api.post(
            "/api/v1/users",
            data={"username": "carol", "email": "carol@example.com", "password": PASSWORD},
        )
        assert created.status == 201, created.text()
        token = api.post("/api/v1/auth/token", data={"username": "carol", "password": PASSWORD})
        assert token.ok, token.text()
        auth = {"Authorization": f"Token {token.json()['token']}"}
        board = api.post(
            "/api/v1/boards", data={"name": "Tall Things", "description": ""}, headers=auth
        )
        assert board.status == 201, board.text()
        board_id = board.json()["id"]
        for n in range(55):
            size = (200, 200 + 40 * (n % 5))  # uneven heights, as in a masonry grid
            pin = api.post(
                "/api/v1/pins",
                multipart={
                    "board_id": board_id,
                    "description": f"Tall thing {n}",
                    "image": {
                        "name": f"{n}.png",
                        "mimeType": "image/png",
                        "buffer": numbered_png(n, size),
                    },
                },
                headers=auth,
            )
            assert pin.status == 201, pin.text()
    finally:
        api.dispose()

    visitor = open_page()  # signed out: these pages are public
    visitor.goto("/carol/")
    expect(stat(visitor, "pin")).to_have_text("55")
    card = visitor.locator(".board-card", has_text="Tall Things")
    expect(card).to_contain_text("55 pins")
    shoot(visitor, "carol-profile")
    card.click()
    expect(visitor.get_by_role("heading", level=1)).to_have_text("Tall Things")
    expect(stat(visitor, "pin")).to_have_text("55")
    chunks = visitor.locator("#pins > .grid")
    expect(chunks).to_have_count(1)  # the "More pins" link is far below the fold
    expect(chunks.first.locator(".pin")).to_have_count(50)
    expect(chunks.first.locator(".pin").first).to_contain_text("Tall thing 54")  # newest first
    shoot(visitor, "carol-board-top")

    visitor.get_by_role("link", name="More pins").scroll_into_view_if_needed()
    visitor.mouse.wheel(0, 20_000)
    expect(chunks).to_have_count(2)
    expect(chunks.nth(1).locator(".pin")).to_have_count(5)
    expect(chunks.nth(1).locator(".pin").last).to_contain_text("Tall thing 0")
    expect(visitor.get_by_role("link", name="More pins")).to_have_count(0)
    hrefs = visitor.locator("#pins .pin").evaluate_all("pins => pins.map(pin => pin.href)")
    assert len(hrefs) == len(set(hrefs)) == 55
    shoot(visitor, "carol-board-scrolled")
