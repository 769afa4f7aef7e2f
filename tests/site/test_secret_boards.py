"""Secret boards: their owner's alone. To anyone else, a secret board and its pins are a 404 by
every route (API, pages, feeds, the newest pins, likes), and counts leave them out; made
public again, they come back, the followers' feeds included."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from pinboard.data_plane import cached_store, get_feeds, get_notifications
from pinboard.notifications.rebuild import expected_notifications
from pinboard.ops import jobs
from social.feed_sync import expected_feeds
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import log_in, text
from toolkit.images import image_upload


@pytest.fixture
def world(client: Client, make_user: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """ann: a public board "Garden" and a secret board "Diary", a pin on each, a comment on
    the secret pin, which she likes; bob follows ann."""
    ann_user, bob_user = make_user("ann"), make_user("bob")
    ann, bob = Api.as_pinner(client, ann_user), Api.as_pinner(client, bob_user)
    assert bob.put(f"/users/{ann.id}/follow").status_code == 204
    garden = ann.new_board("Garden")
    created = ann.post("/boards", {"name": "Diary", "secret": True})
    assert created.status_code == 201 and created.json()["secret"] is True
    diary = created.json()
    public_pin = ann.new_pin(garden["id"], image_upload(), description="tulips")
    secret_pin = ann.new_pin(diary["id"], image_upload(), description="dear diary")
    comment = ann.post(f"/pins/{secret_pin['id']}/comments", {"text": "note to self"}).json()
    assert ann.put(f"/pins/{secret_pin['id']}/like").status_code == 204
    return {
        "ann": ann,
        "bob": bob,
        "anon": Api(client),
        "ann_user": ann_user,
        "bob_user": bob_user,
        "garden": garden,
        "diary": diary,
        "public_pin": public_pin,
        "secret_pin": secret_pin,
        "comment": comment,
    }


def routes(w: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """Every API route that names the secret board or its pin: (method, path, body)."""
    board, pin, comment = w["diary"]["id"], w["secret_pin"]["id"], w["comment"]["id"]
    return [
        ("GET", f"/boards/{board}", None),
        ("PATCH", f"/boards/{board}", {"name": "Mine now"}),
        ("DELETE", f"/boards/{board}", None),
        ("GET", f"/boards/{board}/pins", None),
        ("PUT", f"/boards/{board}/follow", None),
        ("DELETE", f"/boards/{board}/follow", None),
        ("GET", f"/pins/{pin}", None),
        ("PATCH", f"/pins/{pin}", {"description": "mine"}),
        ("DELETE", f"/pins/{pin}", None),
        ("POST", f"/pins/{pin}/save", {"board_id": w["garden"]["id"]}),
        ("PUT", f"/pins/{pin}/like", None),
        ("DELETE", f"/pins/{pin}/like", None),
        ("GET", f"/pins/{pin}/likes", None),
        ("GET", f"/pins/{pin}/comments", None),
        ("POST", f"/pins/{pin}/comments", {"text": "hello?"}),
        ("DELETE", f"/pins/{pin}/comments/{comment}", None),
    ]


def test_every_api_route_is_a_404_for_anyone_else(world: dict[str, Any]) -> None:
    for api in (world["bob"], world["anon"]):
        for method, path, body in routes(world):
            if method != "GET" and api.token is None:
                continue  # a visitor's write is a 401 before anything is looked up
            if path.endswith("/save"):
                body = {"board_id": str(world["bob"].new_board("Saved")["id"])}
            response = api.call(method, path, body)
            assert error_of(response, 404)["code"] == "not_found", (method, path)
    # and nothing changed: the owner still sees it all as it was
    ann = world["ann"]
    board = ann.get(f"/boards/{world['diary']['id']}").json()
    assert (board["name"], board["pin_count"], board["follower_count"]) == ("Diary", 1, 0)
    pin = ann.get(f"/pins/{world['secret_pin']['id']}").json()
    assert (pin["description"], pin["like_count"], pin["comment_count"]) == ("dear diary", 1, 1)


def test_its_owner_reaches_every_read(world: dict[str, Any]) -> None:
    ann = world["ann"]
    for method, path, _ in routes(world):
        if method == "GET":
            assert ann.get(path).status_code == 200, path


def test_lists_and_counts_leave_it_out_for_others(world: dict[str, Any]) -> None:
    ann, bob, anon = world["ann"], world["bob"], world["anon"]
    secret_id, public_id = world["secret_pin"]["id"], world["public_pin"]["id"]
    feed = [p["id"] for p in bob.get("/feed").json()["items"]]
    assert public_id in feed and secret_id not in feed
    for api in (bob, anon):
        boards = [b["name"] for b in api.get(f"/users/{ann.id}/boards").json()["items"]]
        assert boards == ["Garden"]
        assert api.get(f"/users/{ann.id}/likes").json()["items"] == []
        user = api.get(f"/users/{ann.id}").json()
        assert (user["board_count"], user["pin_count"]) == (1, 1)
    assert [p["id"] for p in ann.get(f"/users/{ann.id}/likes").json()["items"]] == [secret_id]
    assert str(secret_id) not in map(str, get_feeds().recent_page().ids)


def test_the_owner_lists_their_secret_boards_apart(world: dict[str, Any]) -> None:
    names = [b["name"] for b in world["ann"].get("/me/secret-boards").json()["items"]]
    assert names == ["Diary"]
    assert world["bob"].get("/me/secret-boards").json()["items"] == []
    assert error_of(world["anon"].get("/me/secret-boards"), 401)


def test_pages_are_404_and_the_profile_shows_it_to_its_owner_alone(
    client: Client, world: dict[str, Any]
) -> None:
    ann, diary, pin = world["ann_user"], world["diary"], world["secret_pin"]
    board_page, pin_page = f"/{ann['username']}/{diary['slug']}/", f"/pin/{pin['id']}/"
    for who in (None, world["bob_user"]):
        if who is not None:
            log_in(client, who)
        assert client.get(board_page).status_code == 404
        assert client.get(pin_page).status_code == 404
        profile = text(client.get(f"/{ann['username']}/"))
        assert "Garden" in profile and "Diary" not in profile
        assert "dear diary" not in text(client.get("/"))
        assert "dear diary" not in text(client.get(f"/{ann['username']}/likes/"))
    log_in(client, ann)
    assert client.get(board_page).status_code == 200
    assert "dear diary" in text(client.get(pin_page))
    profile = text(client.get(f"/{ann['username']}/"))
    assert "Secret boards" in profile and "Diary" in profile


def test_the_board_form_makes_a_board_secret_and_public(
    client: Client, world: dict[str, Any]
) -> None:
    log_in(client, world["ann_user"])
    garden = world["garden"]
    response = client.post(f"/boards/{garden['id']}/edit/", {"name": "Garden", "secret": "on"})
    assert response.status_code == 302
    assert world["bob"].get(f"/boards/{garden['id']}").status_code == 404
    client.post(f"/boards/{garden['id']}/edit/", {"name": "Garden"})
    assert world["bob"].get(f"/boards/{garden['id']}").status_code == 200


def test_made_public_it_joins_feeds_and_counts_and_secret_again_it_leaves(
    world: dict[str, Any],
) -> None:
    ann, bob = world["ann"], world["bob"]
    board_path, secret_id = f"/boards/{world['diary']['id']}", world["secret_pin"]["id"]

    def bob_sees() -> tuple[bool, int]:
        feed = [p["id"] for p in bob.get("/feed").json()["items"]]
        return secret_id in feed, bob.get(f"/users/{ann.id}").json()["pin_count"]

    assert ann.patch(board_path, {"secret": False}).json()["secret"] is False
    assert bob_sees() == (True, 2)
    assert bob.get(f"/pins/{secret_id}").status_code == 200
    assert ann.patch(board_path, {"secret": True}).json()["secret"] is True
    assert bob_sees() == (False, 1)
    # bob's feed (kept by fan-out: he reads it) agrees with MySQL, as a rebuild would write it
    expected = expected_feeds(cached_store(), [int(bob.id)])[int(bob.id)]
    assert get_feeds().entries(int(bob.id)) == expected and len(expected) == 1


def test_the_flag_hides_at_once_before_its_task_has_run(world: dict[str, Any]) -> None:
    """Lists built ahead (a feed) may hold a pin whose board became secret a moment ago:
    reads filter by the board's flag."""
    bob, public_id = world["bob"], world["public_pin"]["id"]
    assert public_id in [p["id"] for p in bob.get("/feed").json()["items"]]
    cached_store().objects("board").update(int(world["garden"]["id"]), {"secret": True})
    assert public_id not in [p["id"] for p in bob.get("/feed").json()["items"]]
    assert bob.get(f"/pins/{public_id}").status_code == 404


def test_a_pin_moved_to_a_secret_board_leaves_feeds_whose_entries_name_its_old_one(
    world: dict[str, Any],
) -> None:
    """A feed entry names the board its pin was on when it was written, so that a page reads
    the pins and their boards at once; the board the pin is on now decides."""
    bob, public_id = world["bob"], int(world["public_pin"]["id"])
    garden, diary = int(world["garden"]["id"]), int(world["diary"]["id"])
    assert public_id in [int(p["id"]) for p in bob.get("/feed").json()["items"]]
    assert get_feeds().page(int(bob.id)).boards[public_id] == garden
    cached_store().objects("pin").update(public_id, {"board_id": diary})  # its task not run
    assert public_id not in [int(p["id"]) for p in bob.get("/feed").json()["items"]]


@pytest.mark.parametrize("secret", ["yes", 1, None])
def test_secret_must_be_a_boolean(world: dict[str, Any], secret: Any) -> None:
    ann = world["ann"]
    assert error_of(ann.post("/boards", {"name": "Odd", "secret": secret}), 422)
    garden = world["garden"]["id"]
    assert error_of(ann.patch(f"/boards/{garden}", {"secret": secret}), 422)
    assert ann.get(f"/boards/{garden}").json()["secret"] is False


def test_a_save_to_a_secret_board_tells_no_one(world: dict[str, Any]) -> None:
    ann, bob = world["ann"], world["bob"]
    hideout = bob.post("/boards", {"name": "Hideout", "secret": True}).json()
    saved = bob.post(f"/pins/{world['public_pin']['id']}/save", {"board_id": hideout["id"]})
    assert saved.status_code == 201
    kinds = [item["kind"] for item in ann.get("/notifications").json()["items"]]
    assert "save" not in kinds
    live = get_notifications().entries(int(ann.id))
    assert expected_notifications(int(ann.id)) == live  # a rebuild would not add it either


def test_a_save_does_not_show_the_id_of_a_secret_source(
    client: Client, world: dict[str, Any]
) -> None:
    ann, bob, garden = world["ann"], world["bob"], world["garden"]
    secret_id, public_id = world["secret_pin"]["id"], world["public_pin"]["id"]
    from_secret = ann.post(f"/pins/{secret_id}/save", {"board_id": garden["id"]}).json()
    from_public = bob.post(f"/pins/{public_id}/save", {"board_id": bob.new_board("B")["id"]}).json()
    assert from_secret["saved_from"] is None and from_public["saved_from"] == public_id
    for api in (bob, world["anon"], ann):
        assert api.get(f"/pins/{from_secret['id']}").json()["saved_from"] is None
        listed = api.get(f"/boards/{garden['id']}/pins").json()["items"]
        assert secret_id not in str(listed)
    log_in(client, world["bob_user"])
    assert secret_id not in text(client.get(f"/pin/{from_secret['id']}/"))
    # The source's board made public shows it again; made secret again, hides it.
    assert ann.patch(f"/boards/{world['diary']['id']}", {"secret": False}).status_code == 200
    assert bob.get(f"/pins/{from_secret['id']}").json()["saved_from"] == secret_id
    assert f"/pin/{secret_id}/" in text(client.get(f"/pin/{from_secret['id']}/"))
    assert ann.patch(f"/boards/{garden['id']}", {"secret": True}).status_code == 200
    assert bob.get(f"/pins/{from_public['id']}").json()["saved_from"] is None


def test_a_pinners_like_count_leaves_out_likes_of_secret_pins(
    client: Client, world: dict[str, Any]
) -> None:
    """As their pin count does: a like of a pin on a secret board is counted by no one, its
    board made public counts it, and the likes page agrees with the count."""
    ann, bob, anon = world["ann"], world["bob"], world["anon"]
    secret_id, public_id = world["secret_pin"]["id"], world["public_pin"]["id"]
    diary, garden = world["diary"]["id"], world["garden"]["id"]

    def like_counts() -> tuple[int, int]:
        shown = {api.get(f"/users/{ann.id}").json()["like_count"] for api in (ann, bob, anon)}
        assert len(shown) == 1  # everyone, ann too, is shown the same
        return shown.pop(), bob.get(f"/users/{bob.id}").json()["like_count"]

    assert like_counts() == (0, 0)  # ann likes her secret pin alone
    assert ann.put(f"/pins/{public_id}/like").status_code == 204
    assert bob.put(f"/pins/{public_id}/like").status_code == 204
    assert like_counts() == (1, 1)
    log_in(client, world["bob_user"])
    likes_page = text(client.get(f"/{world['ann_user']['username']}/likes/"))
    assert "<strong>1</strong> like<" in likes_page and "dear diary" not in likes_page
    assert ann.patch(f"/boards/{diary}", {"secret": False}).status_code == 200
    assert like_counts() == (2, 1)
    assert ann.patch(f"/boards/{diary}", {"secret": True}).status_code == 200
    assert ann.patch(f"/boards/{garden}", {"secret": True}).status_code == 200
    assert like_counts() == (0, 0)  # bob's like of a pin now secret too
    assert ann.delete(f"/pins/{secret_id}/like").status_code == 204
    assert ann.patch(f"/boards/{garden}", {"secret": False}).status_code == 200
    assert like_counts() == (1, 1)
    assert ann.delete(f"/pins/{public_id}").status_code == 204  # its purge takes its likes
    assert like_counts() == (0, 0)


def test_likes_of_secret_pins_from_before_their_list_leave_the_count_after_its_backfill(
    world: dict[str, Any],
) -> None:
    ann, bob, secret_id = world["ann"], world["bob"], int(world["secret_pin"]["id"])
    cached_store().mapping("user_likes_secret_pins").remove(int(ann.id), secret_id)  # as then
    assert bob.get(f"/users/{ann.id}").json()["like_count"] == 1
    assert jobs.totals(jobs.start("secret-likes", {}, created_by="t"))["added"] >= 1
    assert bob.get(f"/users/{ann.id}").json()["like_count"] == 0
    assert jobs.totals(jobs.start("secret-likes", {}, created_by="t"))["added"] == 0
