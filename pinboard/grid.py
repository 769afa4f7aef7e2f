"""Pins as grid items: the dicts and the HTML cards the pin grids and pin pages show; and
boards as the cards a profile and a search show (``board_cards``).

A pin dict from the store has image keys; a template needs their URLs, and a grid
of 50 needs each pin's card built once, in Python (``pins/_grid.html``). A card names
its pinner (avatar, name, a link to the profile) and its board (a link to it), from
pinners and boards the page has read (``pins.queries.pinners_and_boards``): the line
that names them is built once for each pinner and board of the grid, not once a pin.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape as html_escape
from typing import cast

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from shardstore import Page

from .boards.queries import board_stats
from .entities import Board, Pin, User, pinner_stats
from .pins.images import image_urls
from .users.avatars import SMALL, avatar_face

#: How wide a card's image is drawn (static/pinboard.css: ``--column``), for ``srcset``.
CARD_SIZES = "(max-width: 760px) 160px, 236px"


class PinItem(Pin):
    """A pin ready for a template (``pin_item``)."""

    image_url: str
    thumb_url: str
    thumb_2x_url: str | None


class GridPin(PinItem):
    card: SafeString  # its HTML in the grid (``pin_items``)


class BoardCard(Board):
    """A board as its card shows it (``board_cards``)."""

    owner_username: str
    cover: PinItem | None
    pin_count: int
    follower_count: int


def pin_item(pin: Pin) -> PinItem:
    """A pin with the URLs of its image and thumbnail, ready for a template."""
    urls = image_urls(pin)
    return {
        **pin,
        "image_url": urls.full,
        "thumb_url": urls.thumbnail,
        "thumb_2x_url": urls.thumbnail_2x,
    }


def board_cards(
    boards: list[Board],
    owners: Mapping[int, User],
    covers: Mapping[int, Page],
    cover_pins: Mapping[int, Pin],
) -> list[BoardCard]:
    """Boards as cards: each with its newest pin as cover, its pin and follower counts and
    its owner's username. ``owners``: each board's owner, by ID, with counts (a board's
    followers include its owner's); ``covers``: each board's first page of pins, by board ID
    (``boards.queries.reading_covers``), and ``cover_pins`` their newest, by ID
    (``cover_pins``). A board whose owner is missing (being deleted) gets no card."""
    items: list[BoardCard] = []
    for board in boards:
        owner = owners.get(board["owner_id"])
        if owner is None:  # an account deleted, its boards not yet purged
            continue
        first = covers[board["id"]].ids[:1]
        cover = cover_pins.get(first[0]) if first else None
        owner_followers = pinner_stats(owner).followers
        items.append(
            {
                **board,
                "owner_username": owner["username"],
                "cover": pin_item(cover) if cover else None,
                **board_stats(board, owner_followers),
            }
        )
    return items


def pin_items(
    pins: list[Pin], pinners: Mapping[int, User], boards: Mapping[int, Board]
) -> list[GridPin]:
    """Pins for a grid, each with its ``card``: the grid's HTML for it (pins/_grid.html).
    ``pinners`` and ``boards``: by ID, those the pins name (a pin whose pinner or board is
    missing, being deleted, gets a card without the line naming them)."""
    # One reverse a grid for each kind of link: "/pin/%d/", "/%s/", "/%s/%s/".
    pin_url = reverse("pin", args=["0"])[:-2] + "%d/"
    profile_url = reverse("profile", args=["_"])[:-2] + "%s/"
    credits: dict[tuple[int, int], str] = {}
    items = []
    for pin in pins:
        item = cast("GridPin", pin_item(pin))  # with its card once built, below
        owner_id, board_id = pin["owner_id"], pin["board_id"]
        credit = credits.get((owner_id, board_id))
        if credit is None:
            board = boards.get(board_id)
            board_owner = pinners.get(board["owner_id"]) if board else None
            credit = credits[owner_id, board_id] = pin_credit(
                pinners.get(owner_id), board, board_owner, profile_url
            )
        item["card"] = pin_card(item, pin_url % pin["id"], credit)
        items.append(item)
    return items


def pin_credit(
    pinner: User | None,
    board: Board | None,
    board_owner: User | None,
    profile_url: str,
) -> str:
    """The line under a card: the pinner's avatar and name (display name, else username),
    linking to their profile, then the board's name, linking to the board (its owner's:
    a group board's pin may be a collaborator's). Only what their pages show anyone.
    Empty if any of them is missing."""
    if pinner is None or board is None or board_owner is None:
        return ""
    profile = profile_url % html_escape(pinner["username"])
    board_url = profile_url % html_escape(board_owner["username"])
    name = html_escape(pinner.get("display_name") or pinner["username"])
    return (
        f'<p class="credit"><a class="credit-pinner" href="{profile}">'
        f'<span class="avatar tiny" aria-hidden="true">{avatar_face(pinner, SMALL)}</span>'
        f'<span class="credit-name">{name}</span></a>'
        f'<a class="credit-board" href="{board_url}{html_escape(board["slug"])}/">'
        f"{html_escape(board['name'])}</a></p>"
    )


def pin_card(item: PinItem, url: str, credit: str) -> SafeString:
    """One pin of a grid, built in Python: a page holds 50, and the template language
    spent most of a board page's time on them (a lookup, a filter, a tag per attribute).
    ``html.escape`` is what Django's escape filter runs, without its lazy-string wrapping.
    ``credit``: the line naming the pin's pinner and board (``pin_credit``)."""
    image = item["image"]
    description = item.get("description", "")
    alt = html_escape(truncate(description or "Pin", 100))
    caption = (
        f'<span class="pin-caption">{html_escape(truncate(description, 90))}</span>'
        if description
        else ""
    )
    width = html_escape(str(image.get("thumbnail_width", "")))
    height = html_escape(str(image.get("thumbnail_height", "")))
    srcset = ""
    sharper = item.get("thumb_2x_url")
    if sharper:
        srcset = (
            f' srcset="{html_escape(item["thumb_url"])} {width}w,'
            f' {html_escape(sharper)} {int(image["thumbnail_2x_width"])}w"'
            f' sizes="{CARD_SIZES}"'
        )
    return mark_safe(  # every value is escaped
        f'<div class="pin-card"><a class="pin" href="{url}"><img src="{html_escape(item["thumb_url"])}"'
        f'{srcset} width="{width}" height="{height}" alt="{alt}" loading="lazy">{caption}</a>'
        f"{credit}</div>"
    )


def truncate(text: str, length: int) -> str:
    """At most ``length`` characters, the last one an ellipsis if cut (as ``truncatechars``)."""
    return text if len(text) <= length else text[: length - 1] + "\u2026"
