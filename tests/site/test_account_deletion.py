"""Deleting an account: gone at once, its name kept taken, and (``purge_account``, eager
here) its boards, pins, follows, comments, likes and feed removed, the follower graph with them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.test import Client

from pinboard.boards.actions import create_board, update_board
from pinboard.boards.collaborators import accept_invitation, drop_collaborator, invite
from pinboard.boards.queries import all_board_ids, get_board
from pinboard.data_plane import cached_store, get_feeds, get_graph
from pinboard.follows.actions import follow_board, follow_user, unfollow_board
from pinboard.likes.actions import like
from pinboard.ops import jobs
from pinboard.pins.actions import add_comment, create_pin
from pinboard.pins.queries import board_pins_page, get_comment, get_pin
from pinboard.users.actions import delete_account, sign_up
from pinboard.users.queries import get_user
from pinboard.users.tokens import issue_token
from social.graph_sync import sync_graph
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import board_with_pins, log_in, text
from toolkit.images import image_upload

PASSWORD = "plum-orchard-42"  # make_user's


def count(relation: str, from_id: int) -> int:
    return cached_store().mapping(relation).count(from_id)


def test_a_deleted_account_is_gone_at_once_and_what_it_made_after_it(
    client: Client, make_user: Callable[..., dict[str, Any]]
) -> None:
    ann, bob, cid, dan = (make_user(n) for n in ("ann", "bob", "cid", "dan"))
    mine = board_with_pins(ann, "Mine", 2)
    my_pins = board_pins_page(mine["id"]).ids
    bobs_pin = board_pins_page(board_with_pins(bob, "Bob's", 1)["id"]).ids[0]
    dans_board, dans_other = create_board(dan["id"], "Dan's"), create_board(dan["id"], "Other")
    follow_user(ann["id"], bob["id"])
    follow_user(cid["id"], ann["id"])
    follow_board(ann["id"], dans_board["id"])
    follow_board(bob["id"], mine["id"])
    unfollow_board(cid["id"], mine["id"])  # cid follows ann but not this board
    like(ann["id"], bobs_pin)
    token = issue_token(ann)["token"]
    log_in(client, ann)

    response = client.post("/settings/delete/", {"password": "not the password"})
    assert response.status_code == 422 and "the password is wrong" in text(response)
    assert get_user(ann["id"]) is not None and get_board(mine["id"]) is not None

    response = client.post("/settings/delete/", {"password": PASSWORD})
    assert response["Location"] == "/"
    # Gone at once: the profile, the session, the token, the log-in; the names stay taken.
    assert client.get(f"/{ann['username']}/").status_code == 404
    assert 'href="/login/"' in text(client.get("/"))
    assert error_of(Api(client, token=token).get("/me"), 401)["code"] == "unauthenticated"
    response = client.post("/login/", {"login": ann["username"], "password": PASSWORD})
    assert response.status_code == 422 and "wrong username" in text(response)
    for username, email in ((ann["username"], "new@example.com"), ("ann_new", ann["email"])):
        response = client.post(
            "/signup/", {"username": username, "email": email, "password": PASSWORD}
        )
        assert response.status_code == 409, (username, email)

    # Purged: what ann made, and every edge to or from her.
    assert all_board_ids(ann["id"]) == [] and get_board(mine["id"]) is None
    assert [get_pin(p) for p in my_pins] == [None, None]
    for relation in ("user_follows_users", "user_followed_by_users", "user_follows_boards",
                     "user_unfollows_boards", "user_likes_pins", "user_has_pins"):  # fmt: skip
        assert count(relation, ann["id"]) == 0, relation
    assert (count("user_followed_by_users", bob["id"]), count("user_follows_users", cid["id"])) == (0, 0)  # fmt: skip
    assert count("board_followed_by_users", dans_board["id"]) == 0
    assert count("pin_liked_by_users", bobs_pin) == 0
    assert count("user_follows_boards", bob["id"]) == 0  # bob's follow of ann's board
    assert get_feeds().entries(ann["id"]) == []
    assert dans_other["id"] not in all_board_ids(ann["id"])
    report = sync_graph(cached_store().store, get_graph(), repair=False)
    assert (report.keys_repaired, report.keys_removed, report.drift) == (0, 0, [])


def test_the_api_deletes_an_account_with_its_password(client: Client, site_store: Any) -> None:
    user = sign_up("api_leaver", "api_leaver@example.com", PASSWORD)
    me = Api(client, token=issue_token(user)["token"])
    assert error_of(me.call("DELETE", "/me", {"password": "wrong"}), 422)["field"] == "password"
    assert error_of(me.call("DELETE", "/me", {}), 400)["field"] == "password"
    assert me.get("/me").status_code == 200  # nothing changed
    assert me.call("DELETE", "/me", {"password": PASSWORD}).status_code == 204
    assert error_of(me.get("/me"), 401)["code"] == "unauthenticated"
    assert error_of(Api(client).get(f"/users/{user['id']}"), 404)["code"] == "not_found"


def test_a_deleted_accounts_comments_go_from_every_pin(
    client: Client, make_user: Callable[..., dict[str, Any]]
) -> None:
    ann, bob = make_user("ann"), make_user("bob")
    bobs_board = board_with_pins(bob, "Bob's", 1)
    bobs_pin = board_pins_page(bobs_board["id"]).ids[0]
    secret = create_board(bob["id"], "Quiet", secret=True)
    invite(bob["id"], secret["id"], ann["id"])
    accept_invitation(ann["id"], secret["id"])
    secret_pin = create_pin(bob["id"], secret["id"], image_upload())["id"]
    on_public = add_comment(ann["id"], bobs_pin, "nice")
    on_secret = add_comment(ann["id"], secret_pin, "shh")
    kept = add_comment(bob["id"], bobs_pin, "thanks")
    drop_collaborator(secret["id"], ann["id"])  # the secret pin is hidden from her now
    delete_account(ann["id"], PASSWORD)
    for pin_id, comment in ((bobs_pin, on_public), (secret_pin, on_secret)):
        assert comment["id"] not in cached_store().mapping("pin_has_comments").page(pin_id).ids
        assert get_comment(comment["id"]) is None
    assert get_comment(kept["id"]) is not None
    assert count("user_has_comments", ann["id"]) == 0
    log_in(client, bob)
    shown = text(client.get(f"/pin/{bobs_pin}/"))
    assert "thanks" in shown and "nice" not in shown and ann["username"] not in shown


def test_comments_from_before_their_authors_list_are_found_after_its_backfill(
    make_user: Callable[..., dict[str, Any]],
) -> None:
    ann, bob = make_user("ann"), make_user("bob")
    bobs_pin = board_pins_page(board_with_pins(bob, "Bob's", 1)["id"]).ids[0]
    old = add_comment(ann["id"], bobs_pin, "from before")
    cached_store().mapping("user_has_comments").remove(ann["id"], old["id"])  # as then
    job = jobs.start("comment-authors", {}, created_by="t")
    assert jobs.totals(job)["added"] >= 1
    assert jobs.totals(jobs.start("comment-authors", {}, created_by="t"))["added"] == 0
    delete_account(ann["id"], PASSWORD)
    assert get_comment(old["id"]) is None


def test_a_deleted_account_leaves_no_follow_of_a_board_made_secret_since(
    make_user: Callable[..., dict[str, Any]],
) -> None:
    ann, bob = make_user("ann"), make_user("bob")
    bobs, anns = create_board(bob["id"], "Bob's"), create_board(ann["id"], "Ann's")
    follow_board(ann["id"], bobs["id"])
    follow_board(bob["id"], anns["id"])
    update_board(bob["id"], bobs["id"], {"secret": True})
    update_board(ann["id"], anns["id"], {"secret": True})
    delete_account(ann["id"], PASSWORD)
    assert count("board_followed_by_users", bobs["id"]) == 0
    assert count("user_follows_boards", bob["id"]) == 0
