"""The server-rendered pages: accounts, boards, permissions, 404s (profiles: test_profile_pages;
pins: test_pin_pages)."""

from __future__ import annotations

import pytest
from django.test import Client

from pinboard.boards.actions import create_board
from pinboard.boards.queries import get_board
from pinboard.data_plane import cached_store, get_feeds
from pinboard.pins.actions import create_pin, delete_pin, save_pin
from pinboard.pins.queries import board_pins_page
from pinboard.users.queries import get_user_by_username
from social.feed_sync import rebuild_recent
from tests.site.page_helpers import board_url, board_with_pins, grid_html, log_in, text
from toolkit.images import image_upload

# -- every page renders, signed in and out -------------------------------------


def page_urls(cast) -> list[str]:
    ann, recipes, pin = cast["ann"], cast["recipes"], cast["pin"]
    return [
        "/",
        "/signup/",
        "/login/",
        f"/{ann['username']}/",
        f"/{ann['username']}/followers/",
        f"/{ann['username']}/following/",
        f"/{ann['username']}/likes/",
        board_url(ann, recipes),
        f"/pin/{pin}/",
    ]


def test_every_page_renders_signed_out(client, cast):
    for url in page_urls(cast):
        response = client.get(url)
        assert response.status_code == 200, url
        assert "Log in" in text(response)


def test_every_page_renders_signed_in(client, cast):
    log_in(client, cast["bob"])
    for url in [*page_urls(cast)[3:], "/", "/boards/new/", "/pin/new/"]:
        response = client.get(url)
        assert response.status_code == 200, url
        assert "Log out" in text(response)


def test_a_visitor_sees_the_sites_newest_pins_but_not_saves_or_deleted_pins(client, cast):
    ann, bob = cast["ann"], cast["bob"]
    newest, older = board_pins_page(cast["recipes"]["id"]).ids
    saved = save_pin(bob["id"], newest, cast["bobs"]["id"])
    page = text(client.get("/"))
    assert "Find ideas." in page and "New on pinboard" in page
    cards = grid_html(page)
    first_card = cards.split('<a class="pin" href="')[1]
    assert first_card.startswith(f"/pin/{newest}/")  # the newest pin of the whole site
    assert f'href="/pin/{older}/"' in cards
    assert f'href="/pin/{saved["id"]}/"' not in cards
    delete_pin(ann["id"], newest)
    assert f'href="/pin/{newest}/"' not in text(client.get("/"))
    assert newest not in get_feeds().recent_page(limit=1000).ids  # the purge took it off


def test_a_visitors_home_scrolls_through_the_newest_pins(client, make_user):
    board_with_pins(make_user("ann"), "Lots", 51)
    page = text(client.get("/"))
    assert page.count('class="pin"') == 50
    cursor = page.split('data-more="#pins" href="?cursor=')[1].split('"')[0]
    more = text(client.get(f"/?cursor={cursor}&partial=1"))
    assert "Lots pin 0" in more and "<html" not in more
    assert client.get("/?cursor=not-a-cursor!").status_code == 400


def test_landing_signed_in_shows_the_home_feed(client, cast):
    log_in(client, cast["ann"])
    page = text(client.get("/"))
    assert f'href="/pin/{cast["pin"]}/"' in page and 'href="/pin/new/"' in page


def test_pages_that_need_a_pinner_redirect_to_log_in(client, cast):
    for url in ["/boards/new/", "/pin/new/", f"/pin/{cast['pin']}/edit/"]:
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/login/?next=")
    response = client.post(f"/pin/{cast['pin']}/like/", {"next": f"/pin/{cast['pin']}/"})
    assert response["Location"] == f"/login/?next=%2Fpin%2F{cast['pin']}%2F"


# -- accounts -------------------------------------------------------------------


def test_sign_up_logs_in_and_redirects(client, site_store):
    response = client.post(
        "/signup/",
        {"username": "page_newbie", "email": "newbie@example.com", "password": "pw-123456"},
    )
    assert response.status_code == 302 and response["Location"] == "/"
    assert "page_newbie" in text(client.get("/"))


@pytest.mark.parametrize(
    ("form", "status", "message"),
    [
        ({"username": "x", "email": "a@example.com", "password": "plum-orchard-42"}, 422, "3-30"),
        (
            {"username": "fine_name", "email": "nope", "password": "plum-orchard-42"},
            422,
            "valid email",
        ),
        ({"username": "fine_name", "email": "a@example.com", "password": "short"}, 422, "8-256"),
        ({}, 422, "username must be"),
    ],
)
def test_sign_up_errors_are_shown_on_the_form(client, site_store, form, status, message):
    response = client.post("/signup/", form)
    assert response.status_code == status
    assert message in text(response)
    assert 'class="field-error"' in text(response)


def test_sign_up_with_a_taken_name_is_a_conflict(client, make_user):
    ann = make_user("ann")
    form = {
        "username": ann["username"].upper(),
        "email": "x@example.com",
        "password": "plum-orchard-42",
    }
    response = client.post("/signup/", form)
    assert response.status_code == 409 and "is taken" in text(response)


def test_log_in_by_username_or_email_and_log_out(client, make_user):
    ann = make_user("ann")
    response = client.post("/login/", {"login": ann["email"], "password": "plum-orchard-42"})
    assert response.status_code == 302
    assert ann["username"] in text(client.get("/"))
    assert client.get("/logout/").status_code == 405
    assert client.post("/logout/").status_code == 302
    assert "Sign up" in text(client.get("/"))
    log_in(client, ann)  # by username


def test_log_in_error_and_next(client, make_user):
    ann = make_user("ann")
    response = client.post("/login/", {"login": ann["username"], "password": "wrong-pass"})
    assert response.status_code == 422 and "wrong username" in text(response)
    form = {"login": ann["username"], "password": "plum-orchard-42", "next": "/boards/new/"}
    assert client.post("/login/", form)["Location"] == "/boards/new/"


def test_log_in_ignores_a_next_on_another_site(client, make_user):
    ann = make_user("ann")
    form = {
        "login": ann["username"],
        "password": "plum-orchard-42",
        "next": "https://evil.example/",
    }
    assert client.post("/login/", form)["Location"] == "/"


def test_log_in_and_sign_up_are_rate_limited(client, make_user, settings):
    ann = make_user("ann")
    settings.RATE_LIMITS = {"login": (2, 60), "signup": (1, 60)}
    form = {"login": ann["username"], "password": "wrong-pass"}
    for _ in range(2):
        assert client.post("/login/", form, REMOTE_ADDR="10.0.0.7").status_code == 422
    response = client.post("/login/", form, REMOTE_ADDR="10.0.0.7")
    assert response.status_code == 429 and "too many login attempts" in text(response)
    assert 'name="login"' in text(response)
    signup = {"username": "limited_one", "email": "l@example.com", "password": "plum-orchard-42"}
    client.post("/signup/", {}, REMOTE_ADDR="10.0.0.8")
    assert client.post("/signup/", signup, REMOTE_ADDR="10.0.0.8").status_code == 429


def test_forms_carry_csrf_tokens(make_user):
    ann = make_user("ann")
    client = Client(enforce_csrf_checks=True)
    form = {"login": ann["username"], "password": "plum-orchard-42"}
    assert client.post("/login/", form).status_code == 403
    page = text(client.get("/login/"))
    token = page.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    assert client.post("/login/", {**form, "csrfmiddlewaretoken": token}).status_code == 302


# -- boards -------------------------------------------------------------------------


def test_board_page_shows_pins_counts_and_follow_button(client, cast):
    ann, bob, recipes = cast["ann"], cast["bob"], cast["recipes"]
    page = text(client.get(board_url(ann, recipes)))
    assert "<strong>2</strong> pins" in page and "<strong>0</strong> followers" in page
    assert page.count('class="pin"') == 2 and "data-more" not in page
    log_in(client, bob)
    client.post(f"/boards/{recipes['id']}/follow/")
    page = text(client.get(board_url(ann, recipes)))
    assert "<strong>1</strong> follower</span>" in page
    assert f'action="/boards/{recipes["id"]}/unfollow/"' in page
    client.post(f"/boards/{recipes['id']}/unfollow/")
    page = text(client.get(board_url(ann, recipes)))
    assert f'action="/boards/{recipes["id"]}/follow/"' in page


def test_grid_cards_escape_and_shorten_descriptions(client, make_user):
    from pinboard.boards.actions import create_board
    from pinboard.pins.actions import create_pin

    ann = make_user("ann")
    board = create_board(ann["id"], "Cards")
    long = "Tomatoes & basil <b>bold</b> " + "x" * 100
    create_pin(ann["id"], board["id"], image_upload(), long)
    create_pin(ann["id"], board["id"], image_upload(), "")
    page = text(client.get(board_url(ann, board)))
    cards = grid_html(page)
    assert "<b>" not in cards and "Tomatoes &amp; basil &lt;b&gt;bold&lt;/b&gt;" in cards
    caption = cards.split('<span class="pin-caption">')[1].split("</span>")[0]
    assert (
        caption.endswith("\u2026")
        and len(caption.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")) == 90
    )  # truncatechars:90
    assert cards.count('class="pin-caption"') == 1  # no caption without a description
    assert 'alt="Pin"' in cards  # ...but an alt text
    assert cards.count('width="') == 2 and 'width=""' not in cards


def test_grid_cards_offer_a_sharper_thumbnail_to_sharper_screens(client, make_user):
    from pinboard.boards.actions import create_board
    from pinboard.pins.actions import create_pin

    ann = make_user("ann")
    board = create_board(ann["id"], "Sizes")
    wide = create_pin(ann["id"], board["id"], image_upload(size=(600, 450)), "Wide")["image"]
    narrow = create_pin(ann["id"], board["id"], image_upload(size=(200, 150)), "Narrow")["image"]
    assert (wide["thumbnail_width"], wide["thumbnail_height"]) == (236, 177)
    assert (wide["thumbnail_2x_width"], "thumbnail_2x_key" in narrow) == (472, False)
    cards = text(client.get(board_url(ann, board))).split('<a class="pin"')[1:]
    wide_card, narrow_card = (
        (c for c in cards if ">Wide<" in c),
        (c for c in cards if ">Narrow<" in c),
    )
    wide_img, narrow_img = next(wide_card), next(narrow_card)
    thumb, sharper = (wide[k].rsplit("/", 1)[1] for k in ("thumbnail_key", "thumbnail_2x_key"))
    srcset = wide_img.split('srcset="')[1].split('"')[0]
    assert srcset.startswith("/") and thumb in srcset and f"{sharper} 472w" in srcset
    assert 'sizes="(max-width: 760px) 160px, 236px"' in wide_img
    assert 'width="236" height="177"' in wide_img
    assert "srcset" not in narrow_img and 'width="200" height="150"' in narrow_img


def test_board_page_scrolls_50_at_a_time(client, make_user):
    ann = make_user("ann")
    board = board_with_pins(ann, "Lots", 53)
    page = text(client.get(board_url(ann, board)))
    assert page.count('class="pin"') == 50
    assert "Lots pin 52" in page and "Lots pin 2<" not in page  # newest first
    cursor = page.split('data-more="#pins" href="?cursor=')[1].split('"')[0]
    partial = client.get(f"{board_url(ann, board)}?cursor={cursor}&partial=1")
    assert partial.status_code == 200
    body = text(partial)
    assert body.count('class="pin"') == 3 and 'data-next=""' in body and "<html" not in body
    fallback = text(client.get(f"{board_url(ann, board)}?cursor={cursor}"))
    assert fallback.count('class="pin"') == 3 and "<html" in fallback
    assert client.get(f"{board_url(ann, board)}?cursor=not-a-cursor!").status_code == 400


def test_create_board_and_its_errors(client, make_user):
    ann = make_user("ann")
    log_in(client, ann)
    response = client.post("/boards/new/", {"name": "Places to go", "description": "Soon"})
    assert response["Location"] == f"/{ann['username']}/places-to-go/"
    assert "Places to go" in text(client.get(response["Location"]))
    response = client.post("/boards/new/", {"name": "  "})
    assert response.status_code == 422 and "board name must be" in text(response)
    response = client.post("/boards/new/", {"name": "Followers"})  # not the followers page
    assert response["Location"] == f"/{ann['username']}/followers-2/"
    response = client.post("/boards/new/", {"name": "Likes"})  # not the likes page
    assert response["Location"] == f"/{ann['username']}/likes-2/"


def test_edit_and_delete_board_owner_only(client, cast):
    ann, bob, recipes = cast["ann"], cast["bob"], cast["recipes"]
    log_in(client, bob)
    assert client.get(f"/boards/{recipes['id']}/edit/").status_code == 403
    assert client.post(f"/boards/{recipes['id']}/edit/", {"name": "Mine"}).status_code == 403
    assert client.post(f"/boards/{recipes['id']}/delete/").status_code == 403
    assert get_board(recipes["id"])["name"] == "Recipes"

    log_in(client, ann)
    page = text(client.get(f"/boards/{recipes['id']}/edit/"))
    assert 'value="Recipes"' in page
    response = client.post(f"/boards/{recipes['id']}/edit/", {"name": "", "description": ""})
    assert response.status_code == 422
    response = client.post(f"/boards/{recipes['id']}/edit/", {"name": "Dinners"})
    assert response["Location"] == f"/{ann['username']}/dinners/"
    response = client.post(f"/boards/{recipes['id']}/delete/")
    assert response["Location"] == f"/{ann['username']}/"
    assert client.get(f"/{ann['username']}/dinners/").status_code == 404
    assert client.get(f"/pin/{cast['pin']}/").status_code == 404


# -- no 500 on any input ----------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "/pin/abc/",
        "/pin/0/",
        "/pin/-5/",
        "/pin/123456789012345678901234567890/",
        "/pin/241294492511762325/",  # a well-formed pin ID on a shard with no such pin
        "/boards/abc/edit/",
        "/nobody_by_this_name/",
        "/nobody_by_this_name/followers/",
        "/nobody_by_this_name/likes/",
        "/nobody_by_this_name/some-board/",
        "/" + "x" * 300 + "/",
    ],
)
def test_bad_ids_and_names_are_404(client, make_user, url):
    log_in(client, make_user("ann"))
    assert client.get(url).status_code == 404


def test_wrong_type_ids_are_404(client, cast):
    ann, board_id, pin = cast["ann"], cast["recipes"]["id"], cast["pin"]
    log_in(client, ann)
    assert client.get(f"/pin/{board_id}/").status_code == 404
    assert client.get(f"/boards/{pin}/edit/").status_code == 404
    assert client.post(f"/pin/{board_id}/like/").status_code == 404
    assert client.post(f"/users/{pin}/follow/").status_code == 404
    assert client.post(f"/boards/{ann['id']}/follow/").status_code == 404
    assert client.get(f"/{ann['username']}/no-such-board/").status_code == 404
    assert client.get(f"/{ann['username']}/?cursor=%%%").status_code == 400


def test_garbage_form_data_gives_form_errors(client, cast):
    log_in(client, cast["ann"])
    huge = "x" * 5000
    assert client.post("/boards/new/", {"name": huge}).status_code == 422
    assert client.post("/boards/new/", {"name": "ok", "description": huge}).status_code == 422
    assert client.post("/login/", {"login": huge, "password": huge}).status_code == 422
    signup = {"username": ["a", "b"], "email": huge, "password": ""}
    assert Client().post("/signup/", signup).status_code == 422
    form = {"board": str(cast["recipes"]["id"]) + "0", "image": image_upload()}
    assert client.post("/pin/new/", form).status_code in (403, 404)
    response = client.post(f"/pin/{cast['pin']}/comment/", {"text": huge}, follow=True)
    assert response.status_code == 200 and "comment must be" in text(response)
    assert get_user_by_username(cast["ann"]["username"])["counts"]["user_has_pins"] == 2


def test_the_newest_pins_are_rebuilt_from_mysql_as_fan_out_made_them(cast):
    """What an in-process Redis, empty in every new process, starts from."""
    secret = create_board(cast["ann"]["id"], "Hidden", secret=True)
    hidden = create_pin(cast["ann"]["id"], secret["id"], image_upload(), "hidden")
    recipes = board_pins_page(cast["recipes"]["id"]).ids
    saved = save_pin(cast["bob"]["id"], recipes[0], cast["bobs"]["id"])
    ours = {*recipes, hidden["id"], saved["id"]}  # other tests' pins share the store
    feeds = get_feeds()
    live = [p for p in feeds.recent_page(limit=1000).ids if p in ours]
    assert live == recipes  # newest first, neither the secret pin nor the save
    feeds.replace_recent([])
    assert feeds.recent_page().ids == []
    rebuild_recent(cached_store().store, feeds)
    assert [p for p in feeds.recent_page(limit=1000).ids if p in ours] == live
