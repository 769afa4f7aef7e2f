"""Notifications: what one pinner does to another's pins, boards and self reaches that
pinner, in order, once each; the page and the API show them as they are now and mark
them read; nobody hears of what they did themselves."""

from __future__ import annotations

import re
import socket
from typing import Any

from django.conf import settings
from django.test import Client

from pinboard.boards.actions import create_board
from pinboard.data_plane import get_notifications
from pinboard.follows.actions import follow_board, follow_user
from pinboard.likes.actions import like, unlike
from pinboard.notifications import queries, tasks
from pinboard.notifications.actions import mark_read
from pinboard.notifications.kinds import KINDS
from pinboard.pins.actions import add_comment, create_pin, save_pin
from pinboard.users.actions import delete_account, update_profile
from shardstore.redis_shards import RedisShards, RedisTopology
from social.notifications import Notifications
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import log_in, text
from toolkit.images import image_upload

#: What B hears of A's five acts, newest first.
FIVE = ["follow", "follow_board", "comment", "save", "like"]


def badge(response: Any) -> str | None:
    """The header's unread count as read out ("3 unread", "99+ unread"), or None."""
    found = re.search(r'class="badge">(.+?)</span></span>', text(response))
    return re.sub(r"<[^>]+>", "", found.group(1)) if found else None


def five_acts(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """A likes, saves and comments on B's pin, follows B's board, then B."""
    b_board = create_board(b["id"], "Garden")
    pin = create_pin(b["id"], b_board["id"], image_upload(), "Tulips")
    a_board = create_board(a["id"], "Mine")
    like(a["id"], pin["id"])
    save_pin(a["id"], pin["id"], a_board["id"])
    comment = add_comment(a["id"], pin["id"], "Lovely colours")
    follow_board(a["id"], b_board["id"])
    follow_user(a["id"], b["id"])
    return {"pin": pin, "board": b_board, "comment": comment}


def test_five_acts_of_a_reach_b_in_order_and_reading_marks_them_read(make_user):
    a, b = make_user("a"), make_user("b")
    made = five_acts(a, b)
    a_api, b_api = Api.as_pinner(Client(), a), Api.as_pinner(Client(), b)

    body = b_api.get("/notifications").json()
    assert [item["kind"] for item in body["items"]] == FIVE
    assert body["unread_count"] == 5 and body["next"] is None
    assert all(item["unread"] and item["actor"]["id"] == str(a["id"]) for item in body["items"])
    by_kind = {item["kind"]: item for item in body["items"]}
    assert by_kind["like"]["pin"]["id"] == str(made["pin"]["id"])
    assert by_kind["save"]["pin"]["id"] == str(made["pin"]["id"])
    assert by_kind["comment"]["comment"]["text"] == "Lovely colours"
    assert by_kind["comment"]["pin"]["id"] == str(made["pin"]["id"])
    assert by_kind["follow_board"]["board"]["id"] == str(made["board"]["id"])
    assert by_kind["follow_board"]["board"]["follower_count"] == 1  # a, through b now
    assert by_kind["follow"]["pin"] is None and by_kind["follow"]["board"] is None
    stamps = [item["created_at"] for item in body["items"]]
    assert stamps == sorted(stamps, reverse=True)

    b_page = Client()
    log_in(b_page, b)
    home = b_page.get("/")
    assert badge(home) == "5 unread" and "Notifications" in text(home)
    page = b_page.get("/notifications/")
    html = text(page)
    assert page.status_code == 200 and html.count('class="notification unread"') == 5
    said = ["followed you", "followed your board", "commented on your pin", "saved", "liked"]
    assert all(words in html for words in said)
    positions = [html.index(w) for w in ("followed you", "followed your board", "liked your")]
    assert positions == sorted(positions)  # newest first
    assert badge(b_page.get("/")) == "5 unread"  # a visit changes nothing: a GET
    up_to = re.search(r'name="up_to" value="(\d+)"', html)
    assert up_to is not None
    for bad in ("", "x", "0", "-1", "9" * 20):
        assert b_page.post("/notifications/", {"up_to": bad}).status_code == 400, bad
    marked = b_page.post("/notifications/", {"up_to": up_to[1]})
    assert marked.status_code == 302 and marked["Location"] == "/notifications/"
    assert badge(b_page.get("/")) is None
    again = b_api.get("/notifications").json()
    assert again["unread_count"] == 0 and not any(item["unread"] for item in again["items"])
    read = text(b_page.get("/notifications/"))
    assert 'class="notification unread"' not in read and 'name="up_to"' not in read

    assert a_api.get("/notifications").json() == {"items": [], "next": None, "unread_count": 0}
    a_page = Client()
    log_in(a_page, a)
    assert badge(a_page.get("/")) is None
    assert "Nothing yet" in text(a_page.get("/notifications/"))


def test_the_api_pages_with_cursors_and_marks_read_on_request(make_user):
    a, b = make_user("a"), make_user("b")
    five_acts(a, b)
    b_api = Api.as_pinner(Client(), b)
    seen, cursor = [], None
    while True:
        body = b_api.get("/notifications", limit=2, **({"cursor": cursor} if cursor else {}))
        assert body.json()["unread_count"] == 5  # reading is not marking
        seen += [item["kind"] for item in body.json()["items"]]
        cursor = body.json()["next"]
        if cursor is None:
            break
    assert seen == FIVE
    assert b_api.post("/notifications/read").status_code == 204
    assert b_api.get("/notifications").json()["unread_count"] == 0
    more = create_pin(b["id"], create_board(b["id"], "More")["id"], image_upload(), "x")
    like(make_user("c")["id"], more["id"])
    assert b_api.get("/notifications").json()["unread_count"] == 1  # newer than the mark
    error_of(Api(Client()).get("/notifications"), 401)
    error_of(Api(Client()).post("/notifications/read"), 401)
    error_of(b_api.get("/notifications", cursor="Zm9vOmJhcg"), 400)


def test_a_page_cursor_keeps_its_place_among_entries_of_one_time(make_user):
    b = make_user("b")
    for actor in range(1, 6):  # five events in one microsecond
        tasks.deliver.delay(b["id"], "follow", actor, b["id"], 1_700_000_000_000_000)
    members, cursor = [], None
    while True:
        page = get_notifications().page(b["id"], limit=2, cursor=cursor)
        members += [entry.actor_id for entry in page.entries]
        if page.cursor is None:
            break
        cursor = page.cursor
    assert sorted(members) == [1, 2, 3, 4, 5] and len(members) == 5


def test_repeated_deliveries_and_likes_make_one_entry(make_user):
    a, b = make_user("a"), make_user("b")
    board = create_board(b["id"], "Garden")
    pin = create_pin(b["id"], board["id"], image_upload(), "Tulips")
    like(a["id"], pin["id"])
    like(a["id"], pin["id"])  # liked already: nothing new to tell
    [entry] = get_notifications().entries(b["id"])
    for _ in range(3):  # the task delivered again (at least once), late or not
        tasks.deliver.delay(b["id"], entry.kind, a["id"], pin["id"], entry.sequence)
        tasks.deliver.delay(b["id"], entry.kind, a["id"], pin["id"], entry.sequence - 5)
    assert get_notifications().entries(b["id"]) == [entry]
    unlike(a["id"], pin["id"])
    assert get_notifications().entries(b["id"]) == [entry]  # an unlike keeps it
    like(a["id"], pin["id"])
    [again] = get_notifications().entries(b["id"])
    assert again.member == entry.member and again.sequence > entry.sequence  # moved up
    assert get_notifications().unread(b["id"]) == 1


def test_nobody_hears_of_what_they_did_themselves(make_user):
    b = make_user("b")
    board = create_board(b["id"], "Garden")
    pin = create_pin(b["id"], board["id"], image_upload(), "Tulips")
    like(b["id"], pin["id"])
    save_pin(b["id"], pin["id"], board["id"])
    add_comment(b["id"], pin["id"], "Mine")
    assert get_notifications().entries(b["id"]) == []


def test_the_actor_is_shown_as_they_are_now_and_not_at_all_once_gone(make_user):
    a, c, b = make_user("a"), make_user("c"), make_user("b")
    follow_user(a["id"], b["id"])
    follow_user(c["id"], b["id"])
    update_profile(a["id"], {"display_name": "Ada Renamed"})
    b_api = Api.as_pinner(Client(), b)
    [c_item, a_item] = b_api.get("/notifications").json()["items"]
    assert a_item["actor"]["display_name"] == "Ada Renamed"
    page = Client()
    log_in(page, b)
    assert "Ada Renamed" in text(page.get("/notifications/"))
    delete_account(c["id"], "plum-orchard-42")
    assert len(get_notifications().entries(b["id"])) == 2  # kept, and left out at read
    items = b_api.get("/notifications").json()["items"]
    assert [item["actor"]["id"] for item in items] == [str(a["id"])]
    assert c_item["actor"]["id"] == str(c["id"])


def test_the_api_document_names_every_kind(client):
    document = client.get("/api/v1/openapi.json").json()
    kind = document["components"]["schemas"]["Notification"]["properties"]["kind"]
    assert sorted(kind["enum"]) == sorted(KINDS)
    assert "unread_count" in document["components"]["schemas"]["NotificationList"]["required"]


def test_the_header_shows_99_plus_beyond_99(client, make_user):
    b = make_user("b")
    for actor in range(1, 102):
        tasks.deliver.delay(b["id"], "follow", actor, b["id"], 1_700_000_000_000_000 + actor)
    log_in(client, b)
    assert get_notifications().unread(b["id"]) == 101
    assert badge(client.get("/settings/")) == "99+ unread"
    mark_read(b["id"], 1_700_000_000_000_000 + 2)
    assert badge(client.get("/settings/")) == "99 unread"


def test_a_redis_that_does_not_answer_costs_the_header_its_count_not_the_page(
    client, make_user, monkeypatch
):
    b = make_user("b")
    log_in(client, b)
    refused = RedisShards(RedisTopology.single(f"redis://127.0.0.1:{closed_port()}/0"))
    monkeypatch.setattr(queries, "get_notifications", lambda: Notifications(refused))
    response = client.get("/settings/")
    assert response.status_code == 200 and badge(response) is None
    refused.close()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_marking_read_takes_the_pages_csrf_token_and_a_visit_marks_nothing(make_user):
    """A page elsewhere cannot mark a pinner's notifications read: a GET or a HEAD of the
    page changes nothing, and the mark is a POST the CSRF check guards."""
    a, b = make_user("a"), make_user("b")
    five_acts(a, b)
    signed_in = Client()
    log_in(signed_in, b)
    browser = Client(enforce_csrf_checks=True)
    browser.cookies[settings.SESSION_COOKIE_NAME] = signed_in.cookies[settings.SESSION_COOKIE_NAME].value  # fmt: skip
    for _ in range(2):
        assert browser.head("/notifications/").status_code == 200
        page = text(browser.get("/notifications/"))
    assert page.count('class="notification unread"') == 5
    up_to = re.search(r'name="up_to" value="(\d+)"', page)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert up_to is not None and token is not None
    assert browser.post("/notifications/", {"up_to": up_to[1]}).status_code == 403
    assert badge(browser.get("/")) == "5 unread"
    marked = browser.post("/notifications/", {"up_to": up_to[1], "csrfmiddlewaretoken": token[1]})
    assert marked.status_code == 302 and badge(browser.get("/")) is None
