"""Search, as a pinner and an API client use it: pins, boards and pinners found by their words
at ``/search/`` and ``GET /api/v1/search``, page after page, in the API's usual shapes; a
query with nothing to search for is a 400 on the API and a word of help on the page."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from pinboard.boards.actions import create_board, update_board
from pinboard.pins.actions import create_pin, save_pin
from pinboard.search import plane
from pinboard.search.queries import MAX_DEPTH
from pinboard.users.actions import update_profile
from shardstore import cursors
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import board_url, text
from toolkit.images import image_upload

User = dict[str, Any]


def word() -> str:
    """A word no other test's objects hold: the index is shared by the whole run."""
    return "zq" + secrets.token_hex(5)


def found(api: Api, q: str, **params: Any) -> list[str]:
    response = api.get("/search", q=q, **params)
    assert response.status_code == 200, response.content
    return [item["id"] for item in response.json()["items"]]


def test_the_api_finds_pins_boards_and_pinners_in_their_usual_shapes(
    client: Client, make_user: Callable[..., User]
) -> None:
    w = word()
    ann = make_user("ann")
    update_profile(ann["id"], {"display_name": f"Ann {w.upper()}", "about": "Grows quinces"})
    board = create_board(ann["id"], f"Orchard {w}", "Trees and fruit")
    pin = create_pin(ann["id"], board["id"], image_upload(), f"First blossom {w}")
    api = Api(client)
    response = api.get("/search", q=w)
    assert response.json() == {"items": [api.get(f"/pins/{pin['id']}").json()], "next": None}
    response = api.get("/search", q=w, type="boards")
    assert response.json() == {"items": [api.get(f"/boards/{board['id']}").json()], "next": None}
    response = api.get("/search", q=f"ann {w}", type="pinners")
    assert response.json() == {"items": [api.get(f"/users/{ann['id']}").json()], "next": None}
    assert found(api, "grows quinc", type="pinners") != []  # the about text, a prefix
    assert found(api, f"trees {w}", type="boards") == [str(board["id"])]
    assert found(api, f"{w} nothing-else-says-this") == []


def test_a_pin_is_found_by_its_boards_name_and_follows_a_rename(
    client: Client, make_user: Callable[..., User]
) -> None:
    w, renamed = word(), word()
    ann = make_user("ann")
    board = create_board(ann["id"], f"Kitchen {w}")
    pin = create_pin(ann["id"], board["id"], image_upload(), "Copper pans")
    api = Api(client)
    assert found(api, f"copper {w}") == [str(pin["id"])]
    update_board(ann["id"], board["id"], {"name": f"Scullery {renamed}"})
    assert found(api, w) == []
    assert found(api, f"copper {renamed}") == [str(pin["id"])]
    assert found(api, renamed, type="boards") == [str(board["id"])]


def test_results_come_best_first_then_newest(
    client: Client, make_user: Callable[..., User]
) -> None:
    w = word()
    ann = make_user("ann")
    board = create_board(ann["id"], "Things")
    by_board = create_pin(ann["id"], create_board(ann["id"], f"All {w}")["id"], image_upload())
    older = create_pin(ann["id"], board["id"], image_upload(), f"{w} jam")
    newer = save_pin(ann["id"], older["id"], board["id"])  # the same words, made later
    assert found(Api(client), w) == [str(newer["id"]), str(older["id"]), str(by_board["id"])]


def test_pages_follow_each_other_and_keep_to_the_first_pages_moment(
    client: Client, make_user: Callable[..., User]
) -> None:
    w = word()
    ann = make_user("ann")
    board = create_board(ann["id"], "Jars")
    first = create_pin(ann["id"], board["id"], image_upload(), f"Jar {w}")
    pins = [first] + [save_pin(ann["id"], first["id"], board["id"]) for _ in range(4)]
    api = Api(client)
    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": "2", **({"cursor": cursor} if cursor else {})}
        if pages == 1:  # made while the pinner scrolls: not pushed into the pages they read
            late = save_pin(ann["id"], first["id"], board["id"])
        body = api.get("/search", q=w, **params).json()
        seen += [item["id"] for item in body["items"]]
        cursor, pages = body["next"], pages + 1
        if cursor is None:
            break
    assert pages == 3 and seen == [str(p["id"]) for p in reversed(pins)]
    assert found(api, w)[0] == str(late["id"])  # a new search finds it first


def test_search_goes_so_deep_and_no_deeper(client: Client, make_user: Callable[..., User]) -> None:
    w = word()
    ann = make_user("ann")
    create_pin(ann["id"], create_board(ann["id"], "B")["id"], image_upload(), w)
    api = Api(client)
    last = cursors.encode(10**15, MAX_DEPTH - 1)
    assert api.get("/search", q=w, cursor=last).json() == {"items": [], "next": None}
    for beyond in (cursors.encode(10**15, MAX_DEPTH), cursors.encode(10**15, 0)):
        assert error_of(api.get("/search", q=w, cursor=beyond), 400)["field"] == "cursor"
        response = client.get("/search/", {"q": w, "cursor": beyond})
        assert response.status_code == 400 and "not one of ours" in text(response)


@pytest.mark.parametrize(
    ("params", "field", "says"),
    [
        ({}, "q", "type a word"),
        ({"q": ""}, "q", "type a word"),
        ({"q": "   "}, "q", "type a word"),
        ({"q": "x" * 201}, "q", "at most 200"),
        ({"q": "?!* --"}, "q", "letters or digits"),
        ({"q": "jam", "type": "pinboards"}, "type", "one of pins, boards, pinners"),
    ],
)
def test_a_query_with_nothing_to_search_for_is_a_400(
    client: Client, params: dict[str, str], field: str, says: str
) -> None:
    error = error_of(Api(client).get("/search", **params), 400)
    assert error["field"] == field and says in error["message"]


def test_the_page_answers_nothing_to_search_for_with_a_word_of_help(client: Client) -> None:
    response = client.get("/search/")
    assert response.status_code == 200 and "type what you are looking for" in text(response)
    for q, says in [
        ("   ", "Type a word"),
        ("x" * 201, "at most 200"),
        ("?!*", "letters or digits"),
    ]:
        response = client.get("/search/", {"q": q})
        assert response.status_code == 200 and says in text(response), q
        assert 'class="tabs"' not in text(response)
    assert client.get("/search/", {"q": "jam", "type": "pinboards"}).status_code == 400
    assert client.post("/search/", {"q": "jam"}).status_code == 405


def test_the_page_shows_each_kind_of_result_in_its_tab(
    client: Client, make_user: Callable[..., User]
) -> None:
    w = word()
    ann = make_user("ann")
    update_profile(ann["id"], {"display_name": f"Ann {w}", "about": "Makes jam"})
    board = create_board(ann["id"], f"Preserves {w}")
    pin = create_pin(ann["id"], board["id"], image_upload(), f"Damson {w}")
    page = text(client.get("/search/", {"q": w}))
    assert f'href="/pin/{pin["id"]}/"' in page and 'aria-current="page">Pins<' in page
    assert f'name="q" value="{w}"' in page  # the header's box keeps the query
    page = text(client.get("/search/", {"q": w, "type": "boards"}))
    assert f'href="{board_url(ann, board)}"' in page and 'class="board-card"' in page
    assert '<input type="hidden" name="type" value="boards">' in page  # a new query stays here
    page = text(client.get("/search/", {"q": w, "type": "pinners"}))
    assert f'href="/{ann["username"]}/"' in page and "Makes jam" in page
    page = text(client.get("/search/", {"q": f"{w} nothing-else-says-this", "type": "boards"}))
    assert "No boards match" in page


def test_the_page_scrolls_on_in_chunks(client: Client, make_user: Callable[..., User]) -> None:
    w = word()
    ann = make_user("ann")
    board = create_board(ann["id"], "Many")
    first = create_pin(ann["id"], board["id"], image_upload(), f"Sloe {w}")
    for _ in range(54):
        save_pin(ann["id"], first["id"], board["id"])
    page = text(client.get("/search/", {"q": w}))
    assert page.count('class="pin"') == 50
    more = page.split('data-more="#results" data-chunk=".grid" href="')[1].split('"')[0]
    query = parse_qs(urlsplit(more.replace("&amp;", "&")).query)
    assert query["q"] == [w] and query["type"] == ["pins"]
    chunk = text(client.get("/search/", {**{k: v[0] for k, v in query.items()}, "partial": "1"}))
    assert chunk.strip().startswith('<div class="grid" data-next="">')
    assert chunk.count('class="pin"') == 5 and "<html" not in chunk
    assert f'href="/pin/{first["id"]}/"' in chunk  # the oldest, last


def test_boards_and_pinners_scroll_on_in_chunks_too(
    client: Client, make_user: Callable[..., User]
) -> None:
    w = word()
    owners = [make_user("owner") for _ in range(3)]
    for owner in owners:
        update_profile(owner["id"], {"about": f"Likes {w}"})
        for n in range(18):
            create_board(owner["id"], f"{w} {n}")
    for tab, chunk, count in (("boards", ".boards", 54), ("pinners", ".people", 3)):
        page = text(client.get("/search/", {"q": w, "type": tab}))
        if count <= 50:
            assert 'class="more"' not in page
            continue
        more = page.split(f'data-chunk="{chunk}" href="')[1].split('"')[0].replace("&amp;", "&")
        rest = text(client.get(f"/search/{more}&partial=1"))
        assert rest.strip().startswith('<div class="boards" data-next="">'), rest[:80]
        assert page.count('class="board-card"') + rest.count('class="board-card"') == count


def test_an_index_that_cannot_answer_is_a_503_with_retry_after(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "a-file").write_text("")
    broken = plane.open_index(f"sqlite://{tmp_path / 'a-file' / 'index.sqlite3'}")
    previous = plane.use(broken)
    try:
        response = Api(client).get("/search", q="jam")
        assert error_of(response, 503)["code"] == "unavailable"
        assert response["Retry-After"] == "5"
        response = client.get("/search/", {"q": "jam"})
        assert response.status_code == 503 and response["Retry-After"] == "5"
        assert "Search is unavailable" in text(response)
    finally:
        plane.use(previous)
        broken.close()
