"""Pins as grid items: the dicts and the HTML cards the pin grids and pin pages show.

A pin dict from the store has image keys; a template needs their URLs, and a grid
of 50 needs each pin's card built once, in Python (``pins/_grid.html``).
"""

from __future__ import annotations

from html import escape as html_escape
from typing import Any

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from .image_files import image_url

#: How wide a card's image is drawn (static/pinboard.css: ``--column``), for ``srcset``.
CARD_SIZES = "(max-width: 760px) 160px, 236px"


def pin_item(pin: dict[str, Any]) -> dict[str, Any]:
    """A pin with the URLs of its image and thumbnail, ready for a template."""
    image = pin["image"]
    sharper = image.get("thumbnail_2x_key")
    return {
        **pin,
        "image_url": image_url(image["key"]),
        "thumb_url": image_url(image["thumbnail_key"]),
        "thumb_2x_url": image_url(sharper) if sharper else None,
    }


def pin_items(pins: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pins for a grid, each with its ``card``: the grid's HTML for it (pins/_grid.html)."""
    pin_url = reverse("pin", args=["0"])[:-2] + "%d/"  # "/pin/%d/": one reverse per grid
    items = []
    for pin in pins:
        item = pin_item(pin)
        item["card"] = pin_card(item, pin_url % pin["id"])
        items.append(item)
    return items


def pin_card(item: dict[str, Any], url: str) -> SafeString:
    """One pin of a grid, built in Python: a page holds 50, and the template language
    spent most of a board page's time on them (a lookup, a filter, a tag per attribute).
    ``html.escape`` is what Django's escape filter runs, without its lazy-string wrapping."""
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
    if item.get("thumb_2x_url"):
        srcset = (
            f' srcset="{html_escape(item["thumb_url"])} {width}w,'
            f' {html_escape(item["thumb_2x_url"])} {int(image["thumbnail_2x_width"])}w"'
            f' sizes="{CARD_SIZES}"'
        )
    return mark_safe(  # every value is escaped
        f'<a class="pin" href="{url}"><img src="{html_escape(item["thumb_url"])}"{srcset}'
        f' width="{width}" height="{height}" alt="{alt}" loading="lazy">{caption}</a>'
    )


def truncate(text: str, length: int) -> str:
    """At most ``length`` characters, the last one an ellipsis if cut (as ``truncatechars``)."""
    return text if len(text) <= length else text[: length - 1] + "\u2026"
