"""What a search page costs: one query to the search index (counted apart: it is not a
shard's), then the store's multi-gets of what it found, one statement per read group
(a host, or a shard on SQLite) however many results; warm, no SQL at all, and one
multi-get of each cache pool it reads."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from pinboard.boards.actions import create_board
from pinboard.data_plane import cached_store
from pinboard.pins.actions import create_pin, save_pin
from pinboard.search.index import SearchIndex
from pinboard.users.actions import update_profile
from shardstore import shard_of
from tests.site.page_helpers import clear_caches, log_in
from toolkit.images import image_upload

User = dict[str, Any]
SIGNED_IN = 1  # the session's pinner


@dataclass
class Cost:
    sql: int  # round trips to the shards
    index: int  # statements to the search index
    cache: dict[str, int]  # calls to each cache pool that was called
    body: str


#: The cache calls of a cold multi-get (shardstore/cache/readthrough.py): a get, the claims,
#: then the fills, one call each however many keys.
COLD_CALLS = 3


def cost(client: Client, index: SearchIndex, url: str, *, warm: bool = False) -> Cost:
    if not warm:
        clear_caches()
    pools = cached_store().pools
    before = {name: pool.stats.calls for name, pool in pools.items()}
    with cached_store().count_queries() as sql, index.count_queries() as searched:
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    calls = {name: pool.stats.calls - before[name] for name, pool in pools.items()}
    return Cost(
        sql.count,
        searched.count,
        {name: n for name, n in calls.items() if n},
        response.content.decode(),
    )


@pytest.fixture
def authors(make_user: Callable[..., User]) -> tuple[str, list[User]]:
    """Six pinners on shards of their own, each with a board "<w> n" of four pins "Fig <w>",
    and "<w>" in their about text."""
    w = "zq" + secrets.token_hex(5)
    people = [make_user("author", shard=shard) for shard in (1, 4, 7, 10, 13, 15)]
    for n, author in enumerate(people):
        update_profile(author["id"], {"about": f"Grows {w}"})
        board = create_board(author["id"], f"{w} {n}")
        first = create_pin(author["id"], board["id"], image_upload(), f"Fig {w}")
        for _ in range(3):
            save_pin(author["id"], first["id"], board["id"])
    return w, people


def read_groups(users: list[User]) -> int:
    """A pinner's boards and pins live on their shard: how many statements reach them all."""
    return len(cached_store().store.read_groups({shard_of(user["id"]) for user in users}))


def test_the_pins_tab_costs_three_statements_per_read_group_cold_and_none_warm(
    client: Client,
    authors: tuple[str, list[User]],
    search_index: SearchIndex,
    make_user: Callable[..., User],
) -> None:
    w, people = authors
    groups = read_groups(people)
    cold = cost(client, search_index, f"/search/?q={w}")
    # pins by IN, then their boards (privacy is checked on each; the cards take them), then
    # the cards' pinners: per read group
    assert (cold.sql, cold.index) == (3 * groups, 1)
    assert cold.body.count('class="pin"') == 24
    assert cold.cache == {
        "pins": COLD_CALLS,
        "boards": COLD_CALLS,
        "users": COLD_CALLS,
    }
    warm = cost(client, search_index, f"/search/?q={w}", warm=True)
    assert (warm.sql, warm.index, warm.cache) == (0, 1, {"pins": 1, "boards": 1, "users": 1})
    partial = cost(client, search_index, f"/search/?q={w}&partial=1")
    assert (partial.sql, partial.index) == (3 * groups, 1)

    log_in(client, make_user("reader"))
    cold = cost(client, search_index, f"/search/?q={w}")
    assert (cold.sql, cold.index) == (3 * groups + SIGNED_IN, 1)
    warm = cost(client, search_index, f"/search/?q={w}", warm=True)
    assert (warm.sql, warm.index, warm.cache) == (0, 1, {"pins": 1, "boards": 1, "users": 2})


def test_the_boards_tab_costs_a_few_statements_per_read_group_cold_and_none_warm(
    client: Client, authors: tuple[str, list[User]], search_index: SearchIndex
) -> None:
    w, people = authors
    cold = cost(client, search_index, f"/search/?q={w}&type=boards")
    # boards by IN, their owners by IN (on the same shards) and the cover pins by IN, each
    # per read group; board_has_pins of every board (the covers), per shard (page_many),
    # read with the owners: a read group's in the same round trip where the driver sends
    # several statements at once (MySQL)
    groups = read_groups(people)
    shards = len({shard_of(person["id"]) for person in people})
    lists = 0 if cached_store().store.dialect(0).several_statements else shards
    assert (cold.sql, cold.index) == (3 * groups + lists, 1)
    assert cold.body.count('class="board-card"') == 6
    assert set(cold.cache) == {"boards", "users", "lists", "pins"}
    warm = cost(client, search_index, f"/search/?q={w}&type=boards", warm=True)
    assert (warm.sql, warm.index) == (0, 1)
    # the boards; their owners and first pages (one round trip, counted at the first pool
    # asked); the covers
    assert warm.cache == {"boards": 1, "users": 1, "pins": 1}


def test_the_pinners_tab_costs_a_statement_per_read_group_cold_and_none_warm(
    client: Client, authors: tuple[str, list[User]], search_index: SearchIndex
) -> None:
    w, people = authors
    cold = cost(client, search_index, f"/search/?q={w}&type=pinners")
    assert (cold.sql, cold.index) == (read_groups(people), 1)
    assert cold.body.count('class="person"') == 6
    assert cold.cache == {"users": COLD_CALLS}
    warm = cost(client, search_index, f"/search/?q={w}&type=pinners", warm=True)
    assert (warm.sql, warm.index, warm.cache) == (0, 1, {"users": 1})


def test_a_page_with_nothing_to_search_for_costs_nothing(
    client: Client, search_index: SearchIndex
) -> None:
    for url in ("/search/", "/search/?q=%3F%21"):
        empty = cost(client, search_index, url)
        assert (empty.sql, empty.index, empty.cache) == (0, 0, {})
