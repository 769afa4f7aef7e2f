"""Notifications of what is gone, and notifications rebuilt from MySQL.

What a deleted pin, comment or board was named in goes from its owner's list (so it is
not counted unread), and an entry whose object is gone but still listed is left out at
read. ``rebuild_notifications`` writes the list MySQL implies, which is the list the
live deliveries made.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from pinboard.boards.actions import create_board, delete_board
from pinboard.data_plane import cached_store, get_notifications
from pinboard.follows.actions import follow_board, follow_user
from pinboard.likes.actions import like
from pinboard.notifications import rebuild
from pinboard.notifications.actions import mark_read
from pinboard.notifications.rebuild import expected_notifications, rebuild_notifications
from pinboard.pins.actions import add_comment, create_pin, delete_comment, delete_pin, save_pin
from pinboard.users.actions import delete_account
from social.notifications import list_key
from tests.site.api_client import Api
from tests.site.page_helpers import log_in, text
from tests.site.test_notifications import five_acts
from toolkit.images import image_upload


def pin_of(owner: dict[str, Any], board: dict[str, Any], text: str) -> int:
    return int(create_pin(owner["id"], board["id"], image_upload(), text)["id"])


def kinds_and_objects(api: Api) -> list[tuple[str, str | None]]:
    items = api.get("/notifications").json()["items"]
    return [(i["kind"], (i["pin"] or i["board"] or {}).get("id")) for i in items]


def test_what_a_deleted_pin_comment_or_board_was_named_in_goes(make_user):
    a, b = make_user("a"), make_user("b")
    garden, attic = create_board(b["id"], "Garden"), create_board(b["id"], "Attic")
    doomed, kept = pin_of(b, garden, "doomed"), pin_of(b, garden, "kept")
    like(a["id"], doomed)
    add_comment(a["id"], doomed, "on the doomed one")
    save_pin(a["id"], doomed, create_board(a["id"], "Mine")["id"])
    like(a["id"], kept)
    said = add_comment(a["id"], kept, "soon taken back")
    follow_board(a["id"], attic["id"])
    b_api = Api.as_pinner(Client(), b)
    assert b_api.get("/notifications").json()["unread_count"] == 6

    delete_pin(b["id"], doomed)
    delete_comment(a["id"], kept, said["id"])
    delete_board(b["id"], attic["id"])
    body = b_api.get("/notifications").json()
    assert [(i["kind"], i["pin"]["id"]) for i in body["items"]] == [("like", str(kept))]
    assert body["unread_count"] == 1  # the entries went, not only their display
    assert [e.object_id for e in get_notifications().entries(b["id"])] == [kept]


def test_an_entry_whose_pin_is_gone_is_left_out_at_read(make_user):
    a, b = make_user("a"), make_user("b")
    garden = create_board(b["id"], "Garden")
    gone, kept = pin_of(b, garden, "gone"), pin_of(b, garden, "kept")
    like(a["id"], gone)
    like(a["id"], kept)
    cached_store().objects("pin").delete(gone)  # deleted, its purge not run yet
    b_api = Api.as_pinner(Client(), b)
    assert kinds_and_objects(b_api) == [("like", str(kept))]
    assert len(get_notifications().entries(b["id"])) == 2
    page = Client()
    log_in(page, b)
    html = text(page.get("/notifications/"))
    assert len(re.findall(r'<li class="notification[ "]', html)) == 1
    assert f"/pin/{kept}/" in html
    assert f"/pin/{gone}/" not in html


def test_a_rebuild_from_mysql_gives_back_the_live_list(make_user):
    b, a, c, d = make_user("b"), make_user("a"), make_user("c"), make_user("d")
    garden, attic = create_board(b["id"], "Garden"), create_board(b["id"], "Attic")
    tulip, rose = pin_of(b, garden, "tulip"), pin_of(b, attic, "rose")
    a_board, c_board = create_board(a["id"], "A's"), create_board(c["id"], "C's")
    like(a["id"], tulip)
    like(c["id"], tulip)
    like(c["id"], rose)
    save_pin(a["id"], tulip, a_board["id"])
    save_pin(a["id"], tulip, a_board["id"])  # twice: one entry, at the later time
    save_pin(c["id"], rose, c_board["id"])
    add_comment(a["id"], tulip, "one")
    add_comment(a["id"], tulip, "two")
    add_comment(b["id"], tulip, "my own: none")
    follow_board(c["id"], attic["id"])
    follow_board(d["id"], garden["id"])
    follow_user(a["id"], b["id"])
    follow_user(d["id"], c["id"])  # someone else's
    like(b["id"], pin_of(c, c_board, "c's"))  # b acts: c hears, b does not
    live = get_notifications().entries(b["id"])
    assert len(live) == 10  # 3 likes, 2 saves, 2 comments, 2 board follows, 1 follow
    mark_read(b["id"], live[4].sequence)
    unread = get_notifications().unread(b["id"])
    assert unread == 4

    assert expected_notifications(b["id"]) == live
    get_notifications().shards.client_for(b["id"]).delete(list_key(b["id"]))  # Redis lost it
    assert get_notifications().entries(b["id"]) == []
    assert rebuild_notifications(b["id"]) is True
    assert get_notifications().entries(b["id"]) == live
    assert get_notifications().unread(b["id"]) == unread  # the read mark stays


def test_a_rebuild_reads_lists_deeper_only_while_they_make_the_cut(make_user, monkeypatch):
    b = make_user("b")
    garden = create_board(b["id"], "Garden")
    pins = [pin_of(b, garden, f"p{n}") for n in range(3)]
    fans = [make_user("fan") for _ in range(3)]
    for fan in fans:
        for pin in pins:
            like(fan["id"], pin)
    live = get_notifications().entries(b["id"])
    assert len(live) == 9
    monkeypatch.setattr(rebuild, "FIRST_DEPTH", 1)  # one row of each list, then deeper
    assert expected_notifications(b["id"]) == live
    assert expected_notifications(b["id"], length=4) == live[:4]


def test_a_board_follow_taken_over_by_following_its_owner_is_not_rebuilt(make_user):
    a, b = make_user("a"), make_user("b")
    five_acts(a, b)  # ...follows b's board, then b: the board is followed through b now
    live = get_notifications().entries(b["id"])
    rebuilt = expected_notifications(b["id"])
    assert [e for e in live if e.kind != "follow_board"] == rebuilt
    assert len(rebuilt) == 4


@pytest.mark.parametrize("kind", ["like", "follow"])
def test_a_deleted_account_takes_its_own_notifications_along(make_user, kind):
    a, b = make_user("a"), make_user("b")
    if kind == "like":
        like(a["id"], pin_of(b, create_board(b["id"], "Garden"), "x"))
    else:
        follow_user(a["id"], b["id"])
    assert get_notifications().unread(b["id"]) == 1
    delete_account(b["id"], "plum-orchard-42")
    assert get_notifications().entries(b["id"]) == []
    assert get_notifications().unread(b["id"]) == 0
