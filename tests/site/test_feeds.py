"""Home feeds: fan-out on write, merges on follow, removals on unfollow, rebuilds on return."""

from __future__ import annotations

from typing import Any

from django.test import Client

from pinboard.boards.actions import create_board
from pinboard.data_plane import get_feeds, get_graph
from pinboard.feeds.queries import home_feed
from pinboard.follows.actions import follow_board, follow_user, unfollow_board, unfollow_user
from pinboard.pins.actions import create_pin, delete_pin
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import get_counted, log_in
from toolkit.images import image_upload


def feed_ids(user: dict[str, Any]) -> list[int]:
    return [pin_id for _, pin_id in get_feeds().entries(user["id"])]


def pin(owner: dict[str, Any], board: dict[str, Any], text: str = "pin") -> int:
    return create_pin(owner["id"], board["id"], image_upload(), text)["id"]


def test_a_new_pin_reaches_active_followers_of_its_board(make_user):
    owner, fan, away, board_fan = (make_user(n) for n in ("owner", "fan", "away", "boardfan"))
    board = create_board(owner["id"], "Soup")
    follow_user(fan["id"], owner["id"])
    follow_user(away["id"], owner["id"])
    follow_board(board_fan["id"], board["id"])
    for active in (fan, board_fan):
        get_feeds().mark_seen(active["id"])
    new = pin(owner, board)
    assert feed_ids(fan)[0] == new and feed_ids(board_fan)[0] == new
    assert new not in feed_ids(away)  # away too long: no fan-out...
    api = Api.as_pinner(Client(), away)
    items = api.get("/feed").json()["items"]
    assert items[0]["id"] == str(new)  # ...the feed is rebuilt on the next visit


def test_a_board_unfollower_gets_no_fan_out_from_that_board(make_user):
    owner, fan = make_user("owner"), make_user("fan")
    soup, cake = create_board(owner["id"], "Soup"), create_board(owner["id"], "Cake")
    follow_user(fan["id"], owner["id"])
    unfollow_board(fan["id"], cake["id"])
    get_feeds().mark_seen(fan["id"])
    in_soup, in_cake = pin(owner, soup), pin(owner, cake)
    assert in_soup in feed_ids(fan) and in_cake not in feed_ids(fan)


def test_follows_merge_recent_pins_in_order_and_unfollows_remove_them(make_user):
    ann, bob, cid = make_user("ann"), make_user("bob"), make_user("cid")
    soup, cake = create_board(bob["id"], "Soup"), create_board(bob["id"], "Cake")
    cids = create_board(cid["id"], "Trips")
    older = [pin(bob, soup), pin(cid, cids), pin(bob, cake), pin(cid, cids)]
    get_feeds().mark_seen(ann["id"])
    follow_user(ann["id"], bob["id"])
    follow_board(ann["id"], cids["id"])
    assert feed_ids(ann) == older[::-1]  # merged newest first, across both sources
    unfollow_board(ann["id"], cake["id"])  # through the owner: a board unfollow
    assert feed_ids(ann) == [older[3], older[1], older[0]]
    unfollow_user(ann["id"], bob["id"])
    assert feed_ids(ann) == [older[3], older[1]]
    unfollow_board(ann["id"], cids["id"])
    assert feed_ids(ann) == []


def test_a_follow_names_the_boards_of_the_newest_pins_only(make_user, monkeypatch):
    """A follow reads at most NAMED_PINS of the pinner's pins, however many they have; the
    entries left without a board are still shown (their boards read in a second step)."""
    from pinboard.feeds import actions

    monkeypatch.setattr(actions, "NAMED_PINS", 2)
    ann, bob = make_user("ann"), make_user("bob")
    soup, cake = create_board(bob["id"], "Soup"), create_board(bob["id"], "Cake")
    made = [pin(bob, soup), pin(bob, cake), pin(bob, soup)]
    get_feeds().mark_seen(ann["id"])
    follow_user(ann["id"], bob["id"])
    assert get_feeds().page(ann["id"]).boards == {made[2]: soup["id"], made[1]: cake["id"]}
    shown, _ = home_feed(ann["id"])
    assert [p["id"] for p in shown.pins] == made[::-1]


def test_deleted_pins_are_skipped_when_read(client, make_user):
    owner, fan = make_user("owner"), make_user("fan")
    board = create_board(owner["id"], "Soup")
    follow_user(fan["id"], owner["id"])
    get_feeds().mark_seen(fan["id"])
    kept, gone = pin(owner, board, "kept"), pin(owner, board, "gone")
    delete_pin(owner["id"], gone)
    api = Api.as_pinner(client, fan)
    assert [item["id"] for item in api.get("/feed").json()["items"]] == [str(kept)]


def test_the_api_feed_pages_with_cursors_and_needs_a_token(client, make_user):
    owner, fan = make_user("owner"), make_user("fan")
    board = create_board(owner["id"], "Soup")
    made = [pin(owner, board, f"p{n}") for n in range(5)]
    follow_user(fan["id"], owner["id"])
    api, seen, cursor = Api.as_pinner(client, fan), [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        body = api.get("/feed", **params).json()
        seen += [item["id"] for item in body["items"]]
        pin(owner, board, "meanwhile")  # pins pushed between pages neither repeat nor hide
        cursor = body["next"]
        if cursor is None:
            break
    assert seen == [str(p) for p in made[::-1]]
    error_of(Api(client).get("/feed"), 401)


def test_a_warm_home_page_costs_no_sql(client, make_user):
    owner, fan = make_user("owner"), make_user("fan")
    board = create_board(owner["id"], "Soup")
    for n in range(3):
        pin(owner, board, f"p{n}")
    follow_user(fan["id"], owner["id"])
    log_in(client, fan)
    get_counted(client, "/")
    calls = get_graph().shards.calls
    warm, response = get_counted(client, "/", warm=True)
    assert warm == 0 and response.content.count(b'class="pin"') == 3
    # the visit mark, one LRANGE, and the header's count of unread notifications
    assert get_graph().shards.calls - calls == 3


def test_a_fan_out_run_again_after_the_followers_changed_reaches_every_follower(
    make_user, monkeypatch
):
    """A fan-out that died after one batch runs again once a follower has left: the list
    is chunked differently, and every remaining follower still gets the pin."""
    from pinboard.feeds import tasks

    owner = make_user("owner")
    fans = [make_user(f"fan{n}") for n in range(5)]
    board = create_board(owner["id"], "Soup")
    for fan in fans:
        follow_user(fan["id"], owner["id"])
    get_feeds().mark_seen(owner["id"])
    new = pin(owner, board)  # no fan has visited yet: the fan-out skips them all
    for fan in fans:
        get_feeds().mark_seen(fan["id"])
    sequence = get_feeds().entries(owner["id"])[0][0]

    monkeypatch.setattr(tasks, "BATCH", 2)
    first, *_ = get_graph().board_followers(board["id"], owner["id"], chunk=2)
    tasks.fan_out_batch(new, sequence, tasks.batch_name(first), first)  # then the worker died
    unfollow_user(first[0], owner["id"])  # the list shifts by one
    tasks.fan_out_pin(new, sequence)  # delivered again

    for fan in fans:
        if fan["id"] != first[0]:
            assert new in feed_ids(fan), fan["username"]
