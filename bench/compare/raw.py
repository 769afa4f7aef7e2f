"""The floor for a warm HTML page: the site's pages with their data read by hand.

Served by the same Django, middleware, templates and gunicorn as the site (``raw_settings``:
pinboard's production settings with these URLs), each page reads pinboard's own cached
values with a bare pymemcache client, as few multi-gets as the page's steps allow, builds
the same context as the site's view, and renders the same template. What differs from the
site is only the data layer (shardstore's cached tables and pools), which is what the
benchmark's ratio measures. Warm caches only (a miss is a 503): the benchmark fills them
through the site first. Signed-out pages only.
"""

from __future__ import annotations

import os
import threading
from collections import defaultdict
from collections.abc import Callable
from functools import wraps
from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from pymemcache.client.base import Client

from pinboard import urls as site_urls
from pinboard.boards.queries import follower_count
from pinboard.data_plane import cached_store
from pinboard.entities import pin_stats, pinner_stats
from pinboard.grid import pin_item, pin_items
from shardstore.cache import lists

_local = threading.local()


def client() -> Client:
    """This thread's connection (a client is not thread-safe); the benchmark has one
    memcached server, so every pool's keys are on it."""
    if not hasattr(_local, "client"):
        host, port = os.environ["PINBOARD_MEMCACHED"].split(",")[0].rsplit(":", 1)
        _local.client = Client((host, int(port)), timeout=1, no_delay=True)
    return _local.client


class Miss(Exception):
    """A key the site has not cached: this page serves warm caches only."""


def warm_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except Miss as miss:
            return HttpResponse(f"not cached: {miss}", status=503, content_type="text/plain")

    return wrapper


# -- reads: one multi-get each -----------------------------------------------------------


def get(*keys: str) -> list[bytes]:
    found = client().get_many(keys) if keys else {}
    if len(found) != len(keys):
        raise Miss(", ".join(k for k in keys if k not in found))
    return [found[k] for k in keys]


def key(type_name: str, object_id: int) -> str:
    return cached_store().objects(type_name).key(object_id)


def list_key(relation: str, from_id: int) -> str:
    return cached_store().mapping(relation).list_key(from_id)


def lookup_key(name: str, value: str) -> str:
    return cached_store().lookup(name).key(value)


def decode(object_id: int, value: bytes) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(value)
    data["id"] = object_id
    # The cache holds the counts of the mappings with a row; the others are 0.
    data["counts"] = defaultdict(int, data.get("counts", {}))
    return data


def objects(type_name: str, ids: list[int]) -> list[dict[str, Any]]:
    return [decode(i, v) for i, v in zip(ids, get(*(key(type_name, i) for i in ids)), strict=True)]


def page_of(value: bytes, limit: int = 50, *, oldest_first: bool = False) -> tuple[list[int], Any]:
    """A page of a cached list: its IDs and the next page's cursor."""
    cached = lists.decode(value)
    page = cached.page(limit, None, oldest_first) if cached else None
    if page is None:
        raise Miss("a list past its cached part")
    return page.ids, page.cursor


# -- the pages ---------------------------------------------------------------------------


@warm_only
def board(request: HttpRequest, username: str, slug: str) -> HttpResponse:
    (owner_id,) = (int(v) for v in get(lookup_key("username", username)))
    (board_id,) = (int(v) for v in get(lookup_key("board_slug", f"{owner_id}:{slug}")))
    raw_board, raw_owner, raw_pins = get(
        key("board", board_id), key("user", owner_id), list_key("board_has_pins", board_id)
    )
    data, owner = decode(board_id, raw_board), decode(owner_id, raw_owner)
    pin_ids, cursor = page_of(raw_pins)
    # Every pin of a board is its owner's: the cards name the owner and board read above.
    cards = pin_items(objects("pin", pin_ids), {owner_id: owner}, {board_id: data})
    context = {
        "pins": cards,
        "next_cursor": cursor,
        "board": data,
        "owner": owner,
        "pin_count": data["counts"]["board_has_pins"],
        "follower_count": follower_count(data, owner["counts"]["user_followed_by_users"]),
        "following": None,
        "is_owner": False,
    }
    return render(request, "boards/detail.html", context)


@warm_only
def profile(request: HttpRequest, username: str) -> HttpResponse:
    (user_id,) = (int(v) for v in get(lookup_key("username", username)))
    raw_user, raw_boards, raw_group = get(
        key("user", user_id), list_key("user_has_boards", user_id),
        list_key("user_collaborates_on_boards", user_id),
    )  # fmt: skip
    user = decode(user_id, raw_user)
    board_ids, cursor = page_of(raw_boards)
    if page_of(raw_group)[0]:
        raise Miss("group boards (the benchmark's pinners collaborate on none)")
    raw = get(
        *(key("board", b) for b in board_ids), *(list_key("board_has_pins", b) for b in board_ids)
    )
    covers = [page_of(value, 1)[0] for value in raw[len(board_ids) :]]
    cover_pins = {p["id"]: p for p in objects("pin", [c[0] for c in covers if c])}
    owner_followers = user["counts"]["user_followed_by_users"]
    boards = []
    for board_id, value, cover in zip(board_ids, raw, covers, strict=False):
        data = decode(board_id, value)
        boards.append({
            **data, "owner_username": username,
            "cover": pin_item(cover_pins[cover[0]]) if cover else None,
            "pin_count": data["counts"]["board_has_pins"],
            "follower_count": follower_count(data, owner_followers),
        })  # fmt: skip
    context = {
        "profile": user,
        "stats": pinner_stats(user),
        "boards": boards,
        "next_cursor": cursor,
        "following": None,
    }
    return render(request, "users/profile.html", context)


@warm_only
def pin(request: HttpRequest, pin_id: str) -> HttpResponse:
    raw_pin, raw_comments = get(key("pin", int(pin_id)), list_key("pin_has_comments", int(pin_id)))
    data = decode(int(pin_id), raw_pin)
    comment_ids, comments_cursor = page_of(raw_comments, oldest_first=True)
    raw_board, raw_owner, *raw = get(
        key("board", data["board_id"]), key("user", data["owner_id"]),
        *(key("comment", c) for c in comment_ids),
    )  # fmt: skip
    comments = [decode(c, value) for c, value in zip(comment_ids, raw, strict=True)]
    for comment in comments:
        comment["author"] = {"id": comment["author_id"], "username": comment["author_username"]}
    context = {
        "pin": pin_item(data),
        "board": decode(data["board_id"], raw_board),
        "owner": decode(data["owner_id"], raw_owner),
        "comments": comments,
        "comments_cursor": comments_cursor,
        "liked": False,
        "my_boards": [],
        "is_owner": False,
        "counts": pin_stats(data),
    }
    return render(request, "pins/detail.html", context)


# These pages first; then the site's own URLs, which the templates name.
urlpatterns = [
    path("pin/<str:pin_id>/", pin),
    path("<str:username>/", profile),
    path("<str:username>/<str:slug>/", board),
    *site_urls.urlpatterns,
]
