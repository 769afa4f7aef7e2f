"""Pinners' pages: a profile with its counts, followers and following, likes, settings."""

from __future__ import annotations

from pinboard.follows.actions import follow_user
from pinboard.pins.queries import board_pins_page
from tests.site.page_helpers import grid_html, log_in, text


def test_profile_shows_counts_covers_and_follow_button(client, cast, make_user):
    ann, bob, cid = cast["ann"], cast["bob"], make_user("cid")
    follow_user(cid["id"], ann["id"])
    follow_user(ann["id"], bob["id"])
    page = text(client.get(f"/{ann['username']}/"))
    assert "<strong>1</strong> follower</a>" in page
    assert "<strong>1</strong> following</a>" in page
    assert "<strong>1</strong> board</a>" in page
    assert "<strong>2</strong> pins</span>" in page
    assert "2 pins · 1 follower" in page  # the board's followers include ann's
    assert "/media/pins/" in page and "_236.jpg" in page  # the cover thumbnail

    log_in(client, bob)
    page = text(client.get(f"/{ann['username']}/"))
    assert f'action="/users/{ann["id"]}/follow/"' in page
    response = client.post(f"/users/{ann['id']}/follow/", {"next": f"/{ann['username']}/"})
    assert response["Location"] == f"/{ann['username']}/"
    page = text(client.get(f"/{ann['username']}/"))
    assert f'action="/users/{ann["id"]}/unfollow/"' in page
    assert "<strong>2</strong> followers</a>" in page and "2 pins · 2 followers" in page
    client.post(f"/users/{ann['id']}/unfollow/")
    assert "<strong>1</strong> follower</a>" in text(client.get(f"/{ann['username']}/"))


def test_settings_set_the_display_name_and_about_text(client, make_user):
    ann = make_user("ann")
    assert client.get("/settings/")["Location"] == "/login/?next=%2Fsettings%2F"
    log_in(client, ann)
    assert 'href="/settings/"' in text(client.get(f"/{ann['username']}/"))  # "Edit profile"
    response = client.post("/settings/", {"display_name": "x" * 51, "about": "Gardens"})
    assert response.status_code == 422 and "at most 50 characters" in text(response)
    assert 'value="xxxxxxxxxx' in text(response)  # what was typed stays in the form
    response = client.post("/settings/", {"display_name": "Ann <b>L</b>", "about": "Gardens"})
    assert response["Location"] == f"/{ann['username']}/"
    page = text(client.get(response["Location"]))
    assert "<h1>Ann &lt;b&gt;L&lt;/b&gt;</h1>" in page and f"@{ann['username']}" in page
    assert "Gardens" in page
    client.post("/settings/", {"display_name": "", "about": ""})
    assert f"<h1>{ann['username']}</h1>" in text(client.get(f"/{ann['username']}/"))


def test_following_yourself_is_a_message_not_an_error(client, cast):
    ann = cast["ann"]
    log_in(client, ann)
    response = client.post(f"/users/{ann['id']}/follow/", follow=True)
    assert response.status_code == 200 and "cannot follow yourself" in text(response)


def test_followers_and_following_lists(client, cast):
    ann, bob = cast["ann"], cast["bob"]
    follow_user(bob["id"], ann["id"])
    followers = text(client.get(f"/{ann['username']}/followers/"))
    assert f'href="/{bob["username"]}/"' in followers
    following = text(client.get(f"/{bob['username']}/following/"))
    assert f'href="/{ann["username"]}/"' in following
    assert "Not following anyone" in text(client.get(f"/{ann['username']}/following/"))


def test_likes_page_shows_the_liked_pins_latest_first(client, cast):
    bob, recipes = cast["bob"], cast["recipes"]
    older, newer = board_pins_page(recipes["id"]).ids[::-1]
    assert "No likes yet" in text(client.get(f"/{bob['username']}/likes/"))
    log_in(client, bob)
    for pin_id in (older, newer):
        client.post(f"/pin/{pin_id}/like/")
    page = text(client.get(f"/{bob['username']}/likes/"))
    assert "<strong>2</strong> likes" in page
    grid = grid_html(page)
    assert grid.index(f'href="/pin/{newer}/"') < grid.index(f'href="/pin/{older}/"')
    client.post(f"/pin/{newer}/unlike/")
    page = text(client.get(f"/{bob['username']}/likes/"))
    assert f'href="/pin/{newer}/"' not in page and f'href="/pin/{older}/"' in page
