"""A grid's cards name each pin's pinner (avatar, name) and board, linking to their pages,
on every grid, with nothing of the pinner's that their profile does not show."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.test import Client
from django.urls import reverse

from pinboard.data_plane import cached_store
from pinboard.grid import pin_items
from pinboard.image_files import image_url
from pinboard.likes.actions import like
from pinboard.pins.queries import board_pins_page, get_pins, pinners_and_boards
from pinboard.users.actions import set_avatar, update_profile
from tests.site.page_helpers import board_url, board_with_pins, grid_html, log_in, text
from toolkit.images import image_upload

User = dict[str, Any]


def test_every_grid_names_the_pinner_with_their_avatar_and_the_board(
    client: Client, make_user: Callable[..., User]
) -> None:
    ann, fan = make_user("ann"), make_user("fan")
    board = board_with_pins(ann, "Garden", 2)
    like(fan["id"], board_pins_page(board["id"]).ids[0])
    ann = set_avatar(ann["id"], image_upload("me.png", size=(80, 80)))
    update_profile(ann["id"], {"display_name": "Ann <the> Gardener"})
    log_in(client, ann)
    face = f'<img src="{image_url(ann["avatar"]["60"])}" alt="" width="60" height="60">'
    home = grid_html(text(client.get("/")))
    for grid in (
        home,  # her own pins, in her home feed
        grid_html(text(client.get(board_url(ann, board)))),
        grid_html(text(client.get(f"/{fan['username']}/likes/"))),
        grid_html(text(Client().get("/"))),  # a visitor's newest pins
    ):
        assert f'<span class="avatar tiny" aria-hidden="true">{face}</span>' in grid
        assert f'<a class="credit-pinner" href="/{ann["username"]}/">' in grid
        assert '<span class="credit-name">Ann &lt;the&gt; Gardener</span>' in grid
        assert f'<a class="credit-board" href="/{ann["username"]}/garden/">Garden</a>' in grid
    assert home.count('class="credit-pinner"') == 2


def test_without_an_avatar_a_card_shows_the_initial(make_user: Callable[..., User]) -> None:
    ann = make_user("ann")
    board = board_with_pins(ann, "Plain", 1)
    grid = grid_html(text(Client().get(board_url(ann, board))))
    initial = ann["username"][0].upper()
    assert f'<span class="avatar tiny" aria-hidden="true">{initial}</span>' in grid
    assert "<img" not in grid.split('class="credit"')[1]  # no picture to request


def test_a_card_links_its_pinner_and_board_as_the_urlconf_does(
    make_user: Callable[..., User],
) -> None:
    ann = make_user("ann")
    update_profile(ann["id"], {"display_name": 'Ann "A" <Lee> & co'})
    board = board_with_pins(ann, "Tarts & pies", 1)
    pins = get_pins(board_pins_page(board["id"]).ids)
    (item,) = pin_items(pins, *pinners_and_boards(pins))
    profile, board_page = (
        reverse("profile", args=[ann["username"]]),
        reverse("board", args=[ann["username"], board["slug"]]),
    )
    assert f'<a class="credit-pinner" href="{profile}">' in item["card"]
    assert f'<a class="credit-board" href="{board_page}">Tarts &amp; pies</a>' in item["card"]
    assert "Ann &quot;A&quot; &lt;Lee&gt; &amp; co</span>" in item["card"]


def test_without_its_pinner_or_board_a_card_names_neither(make_user: Callable[..., User]) -> None:
    ann = make_user("ann")
    pins = get_pins(board_pins_page(board_with_pins(ann, "Mine", 1)["id"]).ids)
    pinners, boards = pinners_and_boards(pins)
    for missing in ({}, boards), (pinners, {}):
        (item,) = pin_items(pins, *missing)
        assert 'class="pin"' in item["card"] and "credit" not in item["card"]


def test_the_known_pinners_and_boards_are_not_read_again(make_user: Callable[..., User]) -> None:
    ann, bob = make_user("ann"), make_user("bob")
    ann_board, bob_board = board_with_pins(ann, "A", 2), board_with_pins(bob, "B", 1)
    pins = get_pins(board_pins_page(ann_board["id"]).ids + board_pins_page(bob_board["id"]).ids)
    users = cached_store().pools["users"].stats
    calls = users.calls
    pinners, boards = pinners_and_boards(pins, known_pinners=[ann, bob])
    assert users.calls == calls  # both known: no read of users at all
    assert set(pinners) == {ann["id"], bob["id"]}
    assert set(boards) == {ann_board["id"], bob_board["id"]}


def test_a_card_shows_no_more_of_the_pinner_than_their_profile(
    client: Client, make_user: Callable[..., User]
) -> None:
    ann, fan = make_user("ann"), make_user("fan")
    board = board_with_pins(ann, "Public", 1)
    like(fan["id"], board_pins_page(board["id"]).ids[0])
    for url in ("/", f"/{fan['username']}/likes/"):
        grid = grid_html(text(client.get(url)))
        assert ann["username"] in grid
        assert ann["email"] not in grid and ann["password"] not in grid
