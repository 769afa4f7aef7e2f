"""Helpers for the page tests: log a pinner in, build boards and pins through actions.

The ``cast`` fixture (ann with a board of two pins, bob with an empty board) is in conftest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.test import Client

from pinboard.boards.actions import create_board
from pinboard.data_plane import cached_store, get_notifications
from pinboard.pins.actions import create_pin
from toolkit.images import image_upload


def log_in(client: Client, user: dict[str, Any]) -> None:
    response = client.post("/login/", {"login": user["username"], "password": "plum-orchard-42"})
    assert response.status_code == 302, response.content


def board_with_pins(owner: dict[str, Any], name: str, pins: int) -> dict[str, Any]:
    board = create_board(owner["id"], name)
    for n in range(pins):
        create_pin(owner["id"], board["id"], image_upload(), f"{name} pin {n}")
    return board


def clear_caches() -> None:
    for pool in cached_store().pools.values():
        pool.clear()


@dataclass(frozen=True)
class Costs:
    sql: int  # SQL round trips
    redis: int  # Redis round trips (graph, feeds and notifications share the instances)
    response: Any


def get_costs(client: Client, url: str, status: int = 200, *, warm: bool = False) -> Costs:
    """GET ``url``; the SQL and Redis round trips it cost, and the response. Unless
    ``warm``, the cache pools are emptied first, so the count is what a cold cache costs."""
    if not warm:
        clear_caches()
    shards = get_notifications().shards
    calls = shards.calls
    with cached_store().count_queries() as queries:
        response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    return Costs(queries.count, shards.calls - calls, response)


def get_counted(
    client: Client, url: str, status: int = 200, *, warm: bool = False
) -> tuple[int, Any]:
    """GET ``url``; the SQL round trips it cost, and the response (see ``get_costs``)."""
    costs = get_costs(client, url, status, warm=warm)
    return costs.sql, costs.response


def warm_cache_calls(client: Client, url: str) -> int:
    """The cache pools' round trips of a GET of ``url`` once a first GET has filled them."""
    client.get(url)
    pools = cached_store().pools.values()
    before = sum(pool.stats.calls for pool in pools)
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return sum(pool.stats.calls for pool in pools) - before


def board_url(user: dict[str, Any], board: dict[str, Any]) -> str:
    return f"/{user['username']}/{board['slug']}/"


def text(response: Any) -> str:
    return response.content.decode()


def grid_html(page: str) -> str:
    """The cards of the page's (first) pin grid, pins/_grid.html, as HTML."""
    return page.split('<div class="grid"')[1].split("\n</div>")[0]
