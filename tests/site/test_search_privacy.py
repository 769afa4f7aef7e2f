"""What search must never show: another pinner's secret board and its pins (by the API and
the page, however far behind the index is), nor what was deleted; and what it must show
again: a board made public, with its pins."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from pinboard.boards.actions import create_board, delete_board, update_board
from pinboard.data_plane import cached_store
from pinboard.pins.actions import create_pin, delete_pin
from pinboard.search.documents import board_document, pin_document
from pinboard.search.index import SearchIndex
from pinboard.users.actions import delete_account, update_profile
from tests.site.api_client import Api
from tests.site.page_helpers import log_in, text
from toolkit.images import image_upload

User = dict[str, Any]


@pytest.fixture
def world(make_user: Callable[..., User]) -> dict[str, Any]:
    """ann's secret board "Diary <w>" with a pin, and a public board with another; bob."""
    w = "zq" + secrets.token_hex(5)
    ann, bob = make_user("ann"), make_user("bob")
    diary = create_board(ann["id"], f"Diary {w}", "Only mine", secret=True)
    garden = create_board(ann["id"], f"Garden {w}")
    secret_pin = create_pin(ann["id"], diary["id"], image_upload(), f"Dear diary {w}")
    public_pin = create_pin(ann["id"], garden["id"], image_upload(), f"Tulips {w}")
    return {
        "w": w,
        "ann": ann,
        "bob": bob,
        "diary": diary,
        "garden": garden,
        "secret_pin": secret_pin,
        "public_pin": public_pin,
    }


def api_ids(api: Api, q: str, kind: str = "pins") -> set[int]:
    response = api.get("/search", q=q, type=kind)
    assert response.status_code == 200, response.content
    return {int(item["id"]) for item in response.json()["items"]}


def page_shows(client: Client, q: str, kind: str, href: str) -> bool:
    response = client.get("/search/", {"q": q, "type": kind})
    assert response.status_code == 200
    return href in text(response)


def views(client: Client, world: dict[str, Any]) -> dict[str, tuple[Api, Client]]:
    """Each reader, by the API (a token) and by the page (a session)."""
    readers = {"anyone": (Api(client), Client())}
    for name in ("ann", "bob"):
        session = Client()
        log_in(session, world[name])
        readers[name] = (Api.as_pinner(Client(), world[name]), session)
    return readers


def assert_seen(world: dict[str, Any], readers: dict[str, Any], *, secret_for_all: bool) -> None:
    """ann sees her secret board and pin; the others do only if ``secret_for_all``."""
    w, diary, pin = world["w"], world["diary"], world["secret_pin"]
    for name, (api, session) in readers.items():
        expected = name == "ann" or secret_for_all
        assert (pin["id"] in api_ids(api, w)) is expected, name
        assert (diary["id"] in api_ids(api, w, "boards")) is expected, name
        assert page_shows(session, w, "pins", f'href="/pin/{pin["id"]}/"') is expected, name
        assert page_shows(session, w, "boards", f"/{diary['slug']}/") is expected, name
        assert world["public_pin"]["id"] in api_ids(api, w), name


def test_another_pinners_secret_board_and_its_pins_never_show(
    client: Client, world: dict[str, Any]
) -> None:
    assert_seen(world, views(client, world), secret_for_all=False)


def test_the_read_time_check_holds_while_the_index_lags(
    client: Client, world: dict[str, Any], search_index: SearchIndex
) -> None:
    """The index says the secret board and its pin are public (its task has not run yet):
    the pages and the API still show them to ann alone."""
    store = cached_store()
    diary = store.objects("board").get(world["diary"]["id"])
    pin = store.objects("pin").get(world["secret_pin"]["id"])
    assert diary is not None and pin is not None
    search_index.upsert(
        [
            board_document({**diary, "secret": False}),
            pin_document(pin, {**diary, "secret": False}),
        ]
    )
    assert_seen(world, views(client, world), secret_for_all=False)


def test_a_board_made_secret_and_public_again_leaves_and_comes_back(
    client: Client, world: dict[str, Any], search_index: SearchIndex
) -> None:
    readers = views(client, world)
    ann = world["ann"]["id"]
    update_board(ann, world["diary"]["id"], {"secret": False})
    assert_seen(world, readers, secret_for_all=True)
    update_board(ann, world["diary"]["id"], {"secret": True})
    assert_seen(world, readers, secret_for_all=False)
    pin_id = world["secret_pin"]["id"]
    assert search_index.documents("pin", pin_id, pin_id)[0].secret is True  # the index knows
    garden, public_pin = world["garden"]["id"], world["public_pin"]["id"]
    update_board(ann, garden, {"secret": True})
    for api, _ in (readers["bob"], readers["anyone"]):
        assert api_ids(api, world["w"]) == set()
        assert api_ids(api, world["w"], "boards") == set()
    assert api_ids(readers["ann"][0], world["w"]) == {pin_id, public_pin}


def test_deleted_pins_boards_and_accounts_drop_out(
    client: Client, world: dict[str, Any], search_index: SearchIndex
) -> None:
    ann, w = world["ann"], world["w"]
    update_profile(ann["id"], {"display_name": f"Ann {w}"})
    api = Api(client)
    assert api_ids(api, w, "pinners") == {ann["id"]}
    delete_pin(ann["id"], world["public_pin"]["id"])
    assert api_ids(api, w) == set()
    assert not page_shows(client, w, "pins", f'href="/pin/{world["public_pin"]["id"]}/"')
    other = create_pin(ann["id"], world["garden"]["id"], image_upload(), f"Roses {w}")
    delete_board(ann["id"], world["garden"]["id"])
    assert api_ids(api, w) == set() and api_ids(api, w, "boards") == set()
    assert search_index.documents("pin", other["id"], other["id"]) == []
    delete_account(ann["id"], "plum-orchard-42")
    assert api_ids(api, w, "pinners") == set()
    assert api_ids(Api.as_pinner(client, world["bob"]), w, "pinners") == set()
    for kind, object_id in (("user", ann["id"]), ("board", world["diary"]["id"]),
                            ("pin", world["secret_pin"]["id"])):  # fmt: skip
        assert search_index.documents(kind, object_id, object_id) == [], kind


def test_what_was_deleted_stays_out_while_the_index_lags(
    client: Client, world: dict[str, Any], search_index: SearchIndex
) -> None:
    ann, pin, garden = world["ann"], world["public_pin"], world["garden"]
    stale_pin = pin_document(pin, garden)
    delete_pin(ann["id"], pin["id"])
    search_index.upsert([stale_pin])  # as if its task had not run yet
    assert api_ids(Api(client), world["w"]) == set()
    assert not page_shows(client, world["w"], "pins", f'href="/pin/{pin["id"]}/"')
